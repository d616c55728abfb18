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
/// are O(1): users live in a ``CompactPresenceTable`` and the recency list is a pair of index arrays beside it,
/// with no object allocated per node. Limits are exact after every operation: at most `countLimit` users and
/// `costLimit` estimated bytes. An optional time to live expires a user that long after it was last written.
/// A memory warning trims the cache to `warningRetainFraction` of its users, a critical level clears it.
/// The removal observer is called after the lock is released.
public final class LRUMemoryStorage: MemoryStorage, @unchecked Sendable {
    // @unchecked: every mutable property (table, links, costs, deadlines, totals, ledger, counters, observer)
    // is read and written only while holding `lock`; the limits and the clock are immutable.

    public let name = "lru"
    public let countLimit: Int?
    public let costLimit: Int?
    /// How long after its last write a user expires (nil: never).
    public let timeToLive: Duration?
    /// The share of users a warning keeps (the most recently used ones).
    public let warningRetainFraction: Double

    public static let defaultWarningRetainFraction = 0.5

    private let lock = PthreadMutex()
    private let table = CompactPresenceTable()
    private var previous: [Int32] = []
    private var next: [Int32] = []
    private var costs: [Int32] = []
    private var deadlines: [Int64] = []
    private var head: Int32 = -1
    private var tail: Int32 = -1
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
        table.onMove = { [unowned self] from, to in self.moveMetadata(from: from, to: to) }
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
            moveToFront(record)
            return (.present(table.value(at: record)), events)
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
            while tail >= 0 { evict(Int(tail), .explicit, &events) }
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

    /// Reads, changes and writes one user; `replacing` counts an overwrite as a `replaced` removal (a `set`).
    private func write<R>(_ key: BareJID, replacing: Bool, _ body: (inout UserPresence?) -> R) -> R {
        let (result, events): (R, [RemovalEvent]) = withKey(key) { bytes, hash in
            var events: [RemovalEvent] = []
            let record = liveRecord(bytes, hash, &events)
            var value = record.map { table.value(at: $0) }
            let result = body(&value)
            switch (record, value) {
            case (let record?, let value?):
                let cost = EntryCost.estimate(key, value)
                table.replace(at: record, with: value)
                totalCost += cost - Int(costs[record])
                costs[record] = Int32(clamping: cost)
                deadlines[record] = deadline()
                moveToFront(record)
                if replacing {
                    ledger.record(key, .replaced)
                    if observer != nil { events.append(RemovalEvent(key: key, cause: .replaced)) }
                }
            case (let record?, nil):
                evict(record, .explicit, &events)
            case (nil, let value?):
                let cost = EntryCost.estimate(key, value)
                let record = table.insert(bytes, hash: hash, value: value)
                previous.append(-1)
                next.append(-1)
                costs.append(Int32(clamping: cost))
                deadlines.append(deadline())
                totalCost += cost
                linkAtFront(record)
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
            var evicted = 0
            while table.count > keep {
                evict(Int(tail), .pressure, &events)
                evicted += 1
            }
            return (PressureResponse(level: pressure, evicted: evicted, entriesBefore: entriesBefore, entriesAfter: table.count,
                                     bytesBefore: bytesBefore, bytesAfter: totalCost, overBudget: false), events)
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

    private func withKey<R>(_ key: BareJID, _ body: (UnsafeRawBufferPointer, UInt64) -> R) -> R {
        var raw = key.rawValue
        return raw.withUTF8 { utf8 in
            let bytes = UnsafeRawBufferPointer(utf8)
            let hash = CompactPresenceTable.hash(bytes)
            return lock.withLock { body(bytes, hash) }
        }
    }

    /// The record of a key that has not expired; an expired one is evicted on the way.
    private func liveRecord(_ bytes: UnsafeRawBufferPointer, _ hash: UInt64, _ events: inout [RemovalEvent]) -> Int? {
        guard let record = table.find(bytes, hash: hash) else { return nil }
        if timeToLive != nil && deadlines[record] <= now() {
            evict(record, .expired, &events)
            return nil
        }
        return record
    }

    private func deadline() -> Int64 {
        guard let timeToLive else { return .max }
        let (seconds, attoseconds) = timeToLive.components
        return now() &+ seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    private func enforceLimits(_ events: inout [RemovalEvent]) {
        if let countLimit {
            while table.count > countLimit { evict(Int(tail), .countLimit, &events) }
        }
        if let costLimit {
            while totalCost > costLimit && tail >= 0 { evict(Int(tail), .costLimit, &events) }
        }
    }

    private func purgeExpired(_ events: inout [RemovalEvent]) {
        guard timeToLive != nil else { return }
        let current = now()
        var record = table.count - 1
        while record >= 0 {
            if deadlines[record] <= current { evict(record, .expired, &events) }
            record = min(record - 1, table.count - 1)
        }
    }

    private func evict(_ record: Int, _ cause: EvictionCause, _ events: inout [RemovalEvent]) {
        let key = table.key(at: record)
        unlink(record)
        totalCost -= Int(costs[record])
        table.remove(at: record)  // moves the last record's metadata into `record` through `onMove`
        previous.removeLast()
        next.removeLast()
        costs.removeLast()
        deadlines.removeLast()
        ledger.record(key, cause)
        if observer != nil { events.append(RemovalEvent(key: key, cause: cause)) }
    }

    private func linkAtFront(_ record: Int) {
        let index = Int32(record)
        previous[record] = -1
        next[record] = head
        if head >= 0 { previous[Int(head)] = index }
        head = index
        if tail < 0 { tail = index }
    }

    private func unlink(_ record: Int) {
        let before = previous[record]
        let after = next[record]
        if before >= 0 { next[Int(before)] = after } else { head = after }
        if after >= 0 { previous[Int(after)] = before } else { tail = before }
        previous[record] = -1
        next[record] = -1
    }

    private func moveToFront(_ record: Int) {
        guard head != Int32(record) else { return }
        unlink(record)
        linkAtFront(record)
    }

    /// The table moved record `from` (its last) into index `to`: carry its links and metadata along.
    private func moveMetadata(from: Int, to: Int) {
        let before = previous[from]
        let after = next[from]
        previous[to] = before
        next[to] = after
        costs[to] = costs[from]
        deadlines[to] = deadlines[from]
        let index = Int32(to)
        if before >= 0 { next[Int(before)] = index } else { head = index }
        if after >= 0 { previous[Int(after)] = index } else { tail = index }
    }

    private func notify(_ events: [RemovalEvent]) {
        guard !events.isEmpty, let observer = lock.withLock({ self.observer }) else { return }
        for event in events { observer(event) }
    }
}
