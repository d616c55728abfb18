/// A storage that never forgets: a thread-safe hash map that keeps every user whatever happens.
///
/// Under memory pressure it drops nothing and reports whether it is over its memory budget, as Redis does with
/// `noeviction` and memcached with `-M`: losing a status silently is worse than using the memory.
///
/// Keys are spread over independently locked stripes by hash, so tasks working on different users rarely wait
/// for each other; each stripe is a ``CompactPresenceTable`` (one allocation per user, about a third of what
/// `[BareJID: UserPresence]` costs). Stripe count and lock were chosen by measurement (see the README).
public final class DictionaryMemoryStorage: MemoryStorage, @unchecked Sendable {
    // @unchecked: every mutable property (each stripe's table, the ledger counters, the observer) is read and
    // written only while holding the lock that guards it: a stripe's table under that stripe's mutex, the
    // counters and observer under `sharedLock`. `stripeShift` and `memoryBudget` are immutable.

    public static let defaultStripeCount = 64

    public let name = "dictionary"
    /// The heap bytes the storage may use before it reports itself over budget; nil for no budget.
    public let memoryBudget: Int?

    private final class Stripe {
        let lock = PthreadMutex()
        let table = CompactPresenceTable()
    }

    private let stripes: [Stripe]
    private let stripeShift: UInt64
    private let sharedLock = PthreadMutex()
    private var removals: [EvictionCause: Int] = [:]
    private var pressureEvents: [MemoryPressure: Int] = [:]
    private var observer: (@Sendable (RemovalEvent) -> Void)?

    /// - Parameters:
    ///   - stripes: independently locked parts; rounded up to a power of two.
    ///   - memoryBudget: heap bytes above which pressure responses report `overBudget`.
    public init(stripes: Int = DictionaryMemoryStorage.defaultStripeCount, memoryBudget: Int? = nil) {
        var count = 1
        while count < max(stripes, 1) { count *= 2 }
        self.stripes = (0 ..< count).map { _ in Stripe() }
        stripeShift = UInt64(64 - count.trailingZeroBitCount)
        self.memoryBudget = memoryBudget
    }

    @inline(__always)
    private func withStripe<R>(_ key: BareJID, _ body: (CompactPresenceTable, UnsafeRawBufferPointer, UInt64) -> R) -> R {
        var raw = key.rawValue
        return raw.withUTF8 { utf8 in
            let bytes = UnsafeRawBufferPointer(utf8)
            let hash = CompactPresenceTable.hash(bytes)
            let stripe = stripes.count == 1 ? stripes[0] : stripes[Int(truncatingIfNeeded: hash >> stripeShift)]
            return stripe.lock.withLock { body(stripe.table, bytes, hash) }
        }
    }

    public func lookup(_ key: BareJID) -> StoredPresence {
        withStripe(key) { table, bytes, hash in
            table.find(bytes, hash: hash).map { .present(table.value(of: $0)) } ?? .unknown
        }
    }

    public func set(_ value: UserPresence, for key: BareJID) {
        let replaced = withStripe(key) { table, bytes, hash in
            if let record = table.find(bytes, hash: hash) {
                table.replace(record, hash: hash, with: value)
                return true
            }
            table.insert(bytes, hash: hash, value: value)
            return false
        }
        if replaced { recordRemoval(key, .replaced) }
    }

    @discardableResult
    public func remove(_ key: BareJID) -> UserPresence? {
        let removed: UserPresence? = withStripe(key) { table, bytes, hash in
            guard let record = table.find(bytes, hash: hash) else { return nil }
            let value = table.value(of: record)
            table.remove(record, hash: hash)
            return value
        }
        if removed != nil { recordRemoval(key, .explicit) }
        return removed
    }

    public func removeAll() {
        let observing = sharedLock.withLock { self.observer != nil }
        var removedKeys: [BareJID] = []
        var removed = 0
        for stripe in stripes {
            stripe.lock.withLock {
                removed += stripe.table.count
                if observing { stripe.table.forEachKey { removedKeys.append($0) } }
                stripe.table.removeAll()
            }
        }
        let observer = sharedLock.withLock {
            removals[.explicit, default: 0] += removed
            return self.observer
        }
        if let observer { for key in removedKeys { observer(RemovalEvent(key: key, cause: .explicit)) } }
    }

    public var count: Int {
        stripes.reduce(0) { total, stripe in total + stripe.lock.withLock { stripe.table.count } }
    }

    public func update<R>(_ key: BareJID, _ body: (inout UserPresence?) -> R) -> R {
        withStripe(key) { table, bytes, hash in
            let record = table.find(bytes, hash: hash)
            var value = record.map { table.value(of: $0) }
            let result = body(&value)
            switch (record, value) {
            case (let record?, let value?): table.replace(record, hash: hash, with: value)
            case (let record?, nil): table.remove(record, hash: hash)
            case (nil, let value?): table.insert(bytes, hash: hash, value: value)
            case (nil, nil): break
            }
            return result
        }
    }

    /// Drops nothing, whatever the level; reports whether the storage is over its memory budget.
    @discardableResult
    public func handle(_ pressure: MemoryPressure) -> PressureResponse {
        let entries = count
        let bytes = estimatedBytes
        sharedLock.withLock { pressureEvents[pressure, default: 0] += 1 }
        return PressureResponse(
            level: pressure, evicted: 0, entriesBefore: entries, entriesAfter: entries, bytesBefore: bytes,
            bytesAfter: bytes, overBudget: memoryBudget.map { bytes > $0 } ?? false)
    }

    private var estimatedBytes: Int {
        stripes.reduce(0) { total, stripe in total + stripe.lock.withLock { stripe.table.estimatedBytes } }
    }

    public var statistics: StorageStatistics {
        let (removals, pressureEvents) = sharedLock.withLock { (self.removals, self.pressureEvents) }
        return StorageStatistics(entries: count, estimatedBytes: estimatedBytes, removals: removals, lost: 0,
                                 pressureEvents: pressureEvents)
    }

    public var keys: [BareJID] {
        var keys: [BareJID] = []
        for stripe in stripes { stripe.lock.withLock { stripe.table.forEachKey { keys.append($0) } } }
        return keys
    }

    public func setRemovalObserver(_ observer: (@Sendable (RemovalEvent) -> Void)?) {
        sharedLock.withLock { self.observer = observer }
    }

    private func recordRemoval(_ key: BareJID, _ cause: EvictionCause) {
        let observer = sharedLock.withLock {
            removals[cause, default: 0] += 1
            return self.observer
        }
        observer?(RemovalEvent(key: key, cause: cause))
    }
}
