import PresenceModel

/// A storage that never forgets: a thread-safe hash map that keeps every user whatever happens.
///
/// Under memory pressure it drops nothing and reports whether it is over its memory budget, as Redis does with
/// `noeviction` and memcached with `-M`: losing a status silently is worse than using the memory.
///
/// Keys are spread over independently locked stripes by hash, so tasks working on different users rarely wait
/// for each other; each stripe is a `CompactPresenceTable` (one allocation per user, about a third of what
/// `[BareJID: UserPresence]` costs). Stripe count and lock were chosen by measurement (Documentation/Benchmarks.md).
public final class DictionaryMemoryStorage: MemoryStorage {
    public static let defaultStripeCount = 64

    public let name = MemoryStorageKind.dictionary.name
    /// The heap bytes the storage may use before it reports itself over budget; nil for no budget.
    public let memoryBudget: Int?

    private let stripes: [Locked<CompactPresenceTable>]
    private let stripeShift: UInt64
    private let ledger = Locked(StorageLedger())
    private let changes = ChangePublisher()

    /// - Parameters:
    ///   - stripes: independently locked parts; rounded up to a power of two.
    ///   - memoryBudget: heap bytes above which pressure responses report `overBudget`.
    public init(stripes: Int = DictionaryMemoryStorage.defaultStripeCount, memoryBudget: Int? = nil) {
        var count = 1
        while count < max(stripes, 1) { count *= 2 }
        self.stripes = (0 ..< count).map { _ in Locked(CompactPresenceTable()) }
        stripeShift = UInt64(64 - count.trailingZeroBitCount)
        self.memoryBudget = memoryBudget
    }

    @inline(__always)
    private func withStripe<R>(
        _ key: BareJID, _ body: (CompactPresenceTable, UnsafeRawBufferPointer, UInt64) -> R
    ) -> R {
        var raw = key.rawValue
        return raw.withUTF8 { utf8 in
            let bytes = UnsafeRawBufferPointer(utf8)
            let hash = CompactPresenceTable.hash(bytes)
            let stripe = stripes.count == 1 ? stripes[0] : stripes[Int(truncatingIfNeeded: hash >> stripeShift)]
            return stripe.withLock { table in body(table, bytes, hash) }
        }
    }

    public func lookup(_ key: BareJID) -> StoredPresence {
        withStripe(key) { table, bytes, hash in
            table.find(bytes, hash: hash).map { .present(table.value(of: $0)) } ?? .unknown
        }
    }

    /// Reads the shown resource where the user's value is encoded, under the stripe's lock.
    public func withShownPresence<R>(_ key: BareJID, _ body: (StoredShownPresence) -> R) -> R {
        withStripe(key) { table, bytes, hash in
            guard let record = table.find(bytes, hash: hash) else { return body(.unknown) }
            return UserPresenceCoding.withShown(table.encodedValue(of: record)) { body(.present($0)) }
        }
    }

    /// Makes room for `users` users in all, so that filling the storage with that many (a disk tier's restore)
    /// rarely stops to grow a table and move its entries.
    public func reserveCapacity(_ users: Int) {
        // Keys spread evenly over the stripes by hash; an eighth more covers the spread of a million over 64.
        let perStripe = (users + users / 8) / stripes.count + 1
        for stripe in stripes { stripe.withLock { $0.reserveCapacity(perStripe) } }
    }

    public func set(_ value: UserPresence, for key: BareJID) {
        let replaced = withStripe(key) { table, bytes, hash in
            guard let record = table.find(bytes, hash: hash) else {
                table.insert(bytes, hash: hash, value: value)
                changes.publishUpdate(key, old: nil, new: value)
                return false
            }
            if changes.isObserved { changes.publishUpdate(key, old: table.value(of: record), new: value) }
            table.replace(record, hash: hash, with: value)
            return true
        }
        if replaced { ledger.withLock { $0.record(key, .replaced) } }
        changes.deliver()
    }

    @discardableResult
    public func remove(_ key: BareJID) -> UserPresence? {
        let removed: UserPresence? = withStripe(key) { table, bytes, hash in
            guard let record = table.find(bytes, hash: hash) else { return nil }
            let value = table.value(of: record)
            table.remove(record, hash: hash)
            changes.publishRemoval(key, old: value, cause: .explicit)
            return value
        }
        if removed != nil { ledger.withLock { $0.record(key, .explicit) } }
        changes.deliver()
        return removed
    }

    public func removeAll() {
        var removed = 0
        for stripe in stripes {
            stripe.withLock { table in
                removed += table.count
                if changes.isObserved {
                    table.forEachRecord {
                        changes.publishRemoval(table.key(of: $0), old: table.value(of: $0), cause: .explicit)
                    }
                }
                table.removeAll()
            }
        }
        ledger.withLock { $0.record(removed, .explicit) }
        changes.deliver()
    }

    public var count: Int {
        stripes.reduce(0) { total, stripe in total + stripe.withLock { $0.count } }
    }

    public func update<R>(_ key: BareJID, _ body: (inout UserPresence?) -> R) -> R {
        var removed = false
        let result = withStripe(key) { table, bytes, hash in
            let record = table.find(bytes, hash: hash)
            let old = record.map { table.value(of: $0) }
            var value = old
            let result = body(&value)
            switch (record, value) {
            case (let record?, let value?): table.replace(record, hash: hash, with: value)
            case (let record?, nil):
                table.remove(record, hash: hash)
                removed = true
            case (nil, let value?): table.insert(bytes, hash: hash, value: value)
            case (nil, nil): break
            }
            changes.publishUpdate(key, old: old, new: value)
            return result
        }
        if removed { ledger.withLock { $0.record(key, .explicit) } }
        changes.deliver()
        return result
    }

    /// Applies the update to the user's encoded value without decoding it (see `CompactPresenceTable.apply`); the
    /// user's values are decoded only when a change observer listens.
    public func apply(_ update: PresenceUpdate, receivedAt: PresenceTime) {
        let key = update.from.bare
        withStripe(key) { table, bytes, hash in
            guard changes.isObserved else {
                table.apply(update, receivedAt: receivedAt, key: bytes, hash: hash)
                return
            }
            let old = table.find(bytes, hash: hash).map { table.value(of: $0) }
            let record = table.apply(update, receivedAt: receivedAt, key: bytes, hash: hash)
            changes.publishUpdate(key, old: old, new: table.value(of: record))
        }
        changes.deliver()
    }

    /// Drops nothing, whatever the level; reports whether the storage is over its memory budget.
    @discardableResult
    public func handle(_ pressure: MemoryPressure) -> PressureResponse {
        let entries = count
        let bytes = estimatedBytes
        ledger.withLock { $0.recordPressure(pressure) }
        return PressureResponse(
            level: pressure, evicted: 0, entriesBefore: entries, entriesAfter: entries, bytesBefore: bytes,
            bytesAfter: bytes, overBudget: memoryBudget.map { bytes > $0 } ?? false)
    }

    private var estimatedBytes: Int {
        stripes.reduce(0) { total, stripe in total + stripe.withLock { $0.estimatedBytes } }
    }

    public var statistics: StorageStatistics {
        let (entries, bytes) = (count, estimatedBytes)
        return ledger.withLock { $0.statistics(entries: entries, estimatedBytes: bytes) }
    }

    public var keys: [BareJID] {
        var keys: [BareJID] = []
        for stripe in stripes { stripe.withLock { $0.forEachKey { keys.append($0) } } }
        return keys
    }

    /// A part is a stripe: about a sixty-fourth of the keys by default.
    public var keyPartCount: Int { stripes.count }

    public func keys(inPart part: Int) -> [BareJID] {
        guard stripes.indices.contains(part) else { return [] }
        return stripes[part].withLock { table in
            var keys: [BareJID] = []
            keys.reserveCapacity(table.count)
            table.forEachKey { keys.append($0) }
            return keys
        }
    }

    public func setChangeObserver(_ observer: (@Sendable (StorageChange) -> Void)?) {
        changes.setObserver(observer)
    }
}
