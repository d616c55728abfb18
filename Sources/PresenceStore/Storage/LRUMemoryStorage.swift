#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A transparent evicting cache: least recently used first, with exact limits and a reason for every eviction.
///
/// The kind of cache Nuke, YYMemoryCache and Kingfisher built because NSCache is not LRU. Get, set and update
/// are O(1): users live in a ``CompactPresenceTable`` whose records carry the recency links, expiry deadline and
/// cost in their header, so no object is allocated per node. Limits are exact after every operation: at most
/// `countLimit` users and `costLimit` estimated bytes. An optional time to live expires a user that long after
/// it was last written. A memory warning trims the cache to `warningRetainFraction` of its users, a critical
/// level clears it. The removal observer is called after the lock is released.
public final class LRUMemoryStorage: MemoryStorage, @unchecked Sendable {
    // @unchecked: every mutable property (the table and the links in its records, head, tail, totals, ledger,
    // counters, observer) is read and written only while holding `lock`; limits and the clock are immutable.

    public let name = "lru"
    public let countLimit: Int?
    public let costLimit: Int?
    /// How long after its last write a user expires (nil: never).
    public let timeToLive: Duration?
    /// The share of users a warning keeps (the most recently used ones).
    public let warningRetainFraction: Double

    public static let defaultWarningRetainFraction = 0.5

    /// Record header: previous (more recent) record · next (less recent) record · deadline (ms) · cost.
    private typealias Record = CompactPresenceTable.Record
    private static let previousOffset = 0
    private static let nextOffset = 8
    private static let deadlineOffset = 16
    private static let costOffset = 24
    private static let headerSize = 32

    private let lock = PthreadMutex()
    private let table = CompactPresenceTable(headerSize: LRUMemoryStorage.headerSize)
    /// Most and least recently used records.
    private var head: UnsafeMutableRawPointer?
    private var tail: UnsafeMutableRawPointer?
    private var totalCost = 0
    private var ledger = LossLedger()
    private var pressureEvents: [MemoryPressure: Int] = [:]
    private var observer: (@Sendable (RemovalEvent) -> Void)?
    private let now: @Sendable () -> Int64

    /// - Parameters:
    ///   - now: a monotonic clock in milliseconds, for tests; the default is the system's monotonic clock.
    public init(countLimit: Int? = nil, costLimit: Int? = nil, timeToLive: Duration? = nil,
                warningRetainFraction: Double = LRUMemoryStorage.defaultWarningRetainFraction,
                now: (@Sendable () -> Int64)? = nil) {
        self.countLimit = countLimit.map { max($0, 0) }
        self.costLimit = costLimit.map { max($0, 0) }
        self.timeToLive = timeToLive
        self.warningRetainFraction = min(max(warningRetainFraction, 0), 1)
        self.now = now ?? LRUMemoryStorage.monotonicMilliseconds
    }

    @Sendable static func monotonicMilliseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }

    // MARK: MemoryStorage

    public func lookup(_ key: BareJID) -> StoredPresence {
        let (result, events): (StoredPresence, [RemovalEvent]) = withKey(key) { bytes, hash in
            var events: [RemovalEvent] = []
            guard let record = liveRecord(bytes, hash, &events) else {
                return (ledger.cause(of: key).map { .lost($0) } ?? .unknown, events)
            }
            moveToFront(record.pointer)
            return (.present(table.value(of: record)), events)
        }
        notify(events)
        return result
    }

    public func set(_ value: UserPresence, for key: BareJID) {
        write(key, replacing: true) { $0 = value }
    }

    @discardableResult
    public func remove(_ key: BareJID) -> UserPresence? {
        update(key) { value in
            defer { value = nil }
            return value
        }
    }

    public func removeAll() {
        let events: [RemovalEvent] = lock.withLock {
            var events: [RemovalEvent] = []
            while let tail { evict(Record(pointer: tail), .explicit, &events) }
            ledger.forgetAll()
            return events
        }
        notify(events)
    }

    public var count: Int {
        let (count, events): (Int, [RemovalEvent]) = lock.withLock {
            var events: [RemovalEvent] = []
            purgeExpired(&events)
            return (table.count, events)
        }
        notify(events)
        return count
    }

    public func update<R>(_ key: BareJID, _ body: (inout UserPresence?) -> R) -> R {
        write(key, replacing: false, body)
    }

    @discardableResult
    public func handle(_ pressure: MemoryPressure) -> PressureResponse {
        let (response, events): (PressureResponse, [RemovalEvent]) = lock.withLock {
            var events: [RemovalEvent] = []
            purgeExpired(&events)
            pressureEvents[pressure, default: 0] += 1
            let entriesBefore = table.count
            let bytesBefore = totalCost
            let keep: Int
            switch pressure {
            case .normal: keep = entriesBefore
            case .warning: keep = Int(Double(entriesBefore) * warningRetainFraction)
            case .critical: keep = 0
            }
            while table.count > keep, let tail { evict(Record(pointer: tail), .pressure, &events) }
            return (PressureResponse(level: pressure, evicted: entriesBefore - table.count, entriesBefore: entriesBefore,
                                     entriesAfter: table.count, bytesBefore: bytesBefore, bytesAfter: totalCost,
                                     overBudget: false), events)
        }
        notify(events)
        return response
    }

    public var statistics: StorageStatistics {
        let (statistics, events): (StorageStatistics, [RemovalEvent]) = lock.withLock {
            var events: [RemovalEvent] = []
            purgeExpired(&events)
            return (StorageStatistics(entries: table.count, estimatedBytes: totalCost, removals: ledger.removals,
                                      lost: ledger.lostCount, pressureEvents: pressureEvents), events)
        }
        notify(events)
        return statistics
    }

    public var keys: [BareJID] {
        lock.withLock {
            var keys: [BareJID] = []
            table.forEachKey { keys.append($0) }
            return keys
        }
    }

    public func setRemovalObserver(_ observer: (@Sendable (RemovalEvent) -> Void)?) {
        lock.withLock { self.observer = observer }
    }

    // MARK: Internals (called with `lock` held)

    /// Reads, changes and writes one user; `replacing` counts an overwrite as a `replaced` removal (a `set`).
    private func write<R>(_ key: BareJID, replacing: Bool, _ body: (inout UserPresence?) -> R) -> R {
        let (result, events): (R, [RemovalEvent]) = withKey(key) { bytes, hash in
            var events: [RemovalEvent] = []
            let record = liveRecord(bytes, hash, &events)
            var value = record.map { table.value(of: $0) }
            let result = body(&value)
            switch (record, value) {
            case (let record?, let value?):
                let cost = EntryCost.estimate(key, value)
                unlink(record.pointer)
                let moved = table.replace(record, hash: hash, with: value)
                totalCost += cost - LRUMemoryStorage.cost(moved.pointer)
                setMetadata(moved.pointer, cost: cost)
                linkAtFront(moved.pointer)
                if replacing {
                    ledger.record(key, .replaced)
                    if observer != nil { events.append(RemovalEvent(key: key, cause: .replaced)) }
                }
            case (let record?, nil):
                evict(record, .explicit, &events)
            case (nil, let value?):
                let cost = EntryCost.estimate(key, value)
                let inserted = table.insert(bytes, hash: hash, value: value)
                setMetadata(inserted.pointer, cost: cost)
                totalCost += cost
                linkAtFront(inserted.pointer)
                ledger.stored(key)
            case (nil, nil):
                break
            }
            enforceLimits(&events)
            return (result, events)
        }
        notify(events)
        return result
    }

    private func withKey<R>(_ key: BareJID, _ body: (UnsafeRawBufferPointer, UInt64) -> R) -> R {
        var raw = key.rawValue
        return raw.withUTF8 { utf8 in
            let bytes = UnsafeRawBufferPointer(utf8)
            let hash = CompactPresenceTable.hash(bytes)
            return lock.withLock { body(bytes, hash) }
        }
    }

    /// The record of a key that has not expired; an expired one is evicted on the way.
    private func liveRecord(_ bytes: UnsafeRawBufferPointer, _ hash: UInt64, _ events: inout [RemovalEvent]) -> Record? {
        guard let record = table.find(bytes, hash: hash) else { return nil }
        if timeToLive != nil && LRUMemoryStorage.deadline(record.pointer) <= now() {
            evict(record, .expired, &events)
            return nil
        }
        return record
    }

    private func setMetadata(_ pointer: UnsafeMutableRawPointer, cost: Int) {
        var deadline = Int64.max
        if let timeToLive {
            let (seconds, attoseconds) = timeToLive.components
            deadline = now() &+ seconds &* 1000 &+ attoseconds / 1_000_000_000_000_000
        }
        pointer.storeBytes(of: deadline, toByteOffset: LRUMemoryStorage.deadlineOffset, as: Int64.self)
        pointer.storeBytes(of: Int32(clamping: cost), toByteOffset: LRUMemoryStorage.costOffset, as: Int32.self)
    }

    private static func deadline(_ pointer: UnsafeMutableRawPointer) -> Int64 {
        pointer.load(fromByteOffset: deadlineOffset, as: Int64.self)
    }

    private static func cost(_ pointer: UnsafeMutableRawPointer) -> Int {
        Int(pointer.load(fromByteOffset: costOffset, as: Int32.self))
    }

    private func enforceLimits(_ events: inout [RemovalEvent]) {
        if let countLimit {
            while table.count > countLimit, let tail { evict(Record(pointer: tail), .countLimit, &events) }
        }
        if let costLimit {
            while totalCost > costLimit, let tail { evict(Record(pointer: tail), .costLimit, &events) }
        }
    }

    private func purgeExpired(_ events: inout [RemovalEvent]) {
        guard timeToLive != nil else { return }
        let current = now()
        var expired: [Record] = []
        table.forEachRecord { if LRUMemoryStorage.deadline($0.pointer) <= current { expired.append($0) } }
        for record in expired { evict(record, .expired, &events) }
    }

    private func evict(_ record: Record, _ cause: EvictionCause, _ events: inout [RemovalEvent]) {
        let key = table.key(of: record)
        unlink(record.pointer)
        totalCost -= LRUMemoryStorage.cost(record.pointer)
        table.remove(record, hash: table.hash(of: record))
        ledger.record(key, cause)
        if observer != nil { events.append(RemovalEvent(key: key, cause: cause)) }
    }

    private func link(_ pointer: UnsafeMutableRawPointer, _ offset: Int) -> UnsafeMutableRawPointer? {
        UnsafeMutableRawPointer(bitPattern: pointer.load(fromByteOffset: offset, as: UInt.self))
    }

    private func setLink(_ pointer: UnsafeMutableRawPointer, _ offset: Int, _ target: UnsafeMutableRawPointer?) {
        pointer.storeBytes(of: UInt(bitPattern: target), toByteOffset: offset, as: UInt.self)
    }

    private func linkAtFront(_ pointer: UnsafeMutableRawPointer) {
        setLink(pointer, LRUMemoryStorage.previousOffset, nil)
        setLink(pointer, LRUMemoryStorage.nextOffset, head)
        if let head { setLink(head, LRUMemoryStorage.previousOffset, pointer) }
        head = pointer
        if tail == nil { tail = pointer }
    }

    private func unlink(_ pointer: UnsafeMutableRawPointer) {
        let before = link(pointer, LRUMemoryStorage.previousOffset)
        let after = link(pointer, LRUMemoryStorage.nextOffset)
        if let before { setLink(before, LRUMemoryStorage.nextOffset, after) } else { head = after }
        if let after { setLink(after, LRUMemoryStorage.previousOffset, before) } else { tail = before }
        setLink(pointer, LRUMemoryStorage.previousOffset, nil)
        setLink(pointer, LRUMemoryStorage.nextOffset, nil)
    }

    private func moveToFront(_ pointer: UnsafeMutableRawPointer) {
        guard head != pointer else { return }
        unlink(pointer)
        linkAtFront(pointer)
    }

    private func notify(_ events: [RemovalEvent]) {
        guard !events.isEmpty, let observer = lock.withLock({ self.observer }) else { return }
        for event in events { observer(event) }
    }
}
