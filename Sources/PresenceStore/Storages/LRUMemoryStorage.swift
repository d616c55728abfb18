import PresenceModel

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
/// are O(1): users live in a `CompactPresenceTable` whose records carry the recency links, expiry deadline and
/// cost in their header, so no object is allocated per node. Limits are exact after every operation: at most
/// `countLimit` users and `costLimit` estimated bytes. An optional time to live expires a user that long after
/// it was last written. A memory warning trims the cache to `warningRetainFraction` of its users, a critical
/// level clears it. Users someone is watching can be pinned (``MemoryStorage/pin(_:)``): they leave the recency list and
/// no limit or pressure evicts them until unpinned.
public final class LRUMemoryStorage: MemoryStorage {
    public let name = MemoryStorageKind.lru.name
    public let countLimit: Int?
    public let costLimit: Int?
    /// How long after its last write a user expires (nil: never).
    public let timeToLive: Duration?
    /// The share of users a warning keeps (the most recently used ones).
    public let warningRetainFraction: Double

    public static let defaultWarningRetainFraction = 0.5

    private let state: Locked<RecencyList>
    private let changes = ChangePublisher()

    /// - Parameters:
    ///   - countLimit: the most users kept; nil for no limit.
    ///   - costLimit: the most estimated bytes kept; nil for no limit.
    ///   - timeToLive: how long after their last update a user expires; nil for never.
    ///   - warningRetainFraction: the share of users kept when a memory warning arrives.
    ///   - now: a monotonic clock in milliseconds, for tests; the default is the system's monotonic clock.
    public init(
        countLimit: Int? = nil, costLimit: Int? = nil, timeToLive: Duration? = nil,
        warningRetainFraction: Double = LRUMemoryStorage.defaultWarningRetainFraction,
        now: (@Sendable () -> Int64)? = nil
    ) {
        self.countLimit = countLimit.map { max($0, 0) }
        self.costLimit = costLimit.map { max($0, 0) }
        self.timeToLive = timeToLive
        self.warningRetainFraction = min(max(warningRetainFraction, 0), 1)
        let timeToLiveMilliseconds = timeToLive.map { duration -> Int64 in
            let (seconds, attoseconds) = duration.components
            return seconds &* 1000 &+ attoseconds / 1_000_000_000_000_000
        }
        state = Locked(
            RecencyList(
                countLimit: self.countLimit, costLimit: self.costLimit, timeToLive: timeToLiveMilliseconds,
                now: now ?? LRUMemoryStorage.monotonicMilliseconds, changes: changes))
    }

    @Sendable static func monotonicMilliseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }

    // MARK: MemoryStorage

    public func lookup(_ key: BareJID) -> StoredPresence {
        let result = withKey(key) { list, bytes, hash -> StoredPresence in
            guard let record = list.liveRecord(bytes, hash) else {
                return list.ledger.cause(of: key).map { .lost($0) } ?? .unknown
            }
            list.moveToFront(record.pointer, key: key)
            return .present(list.table.value(of: record))
        }
        changes.deliver()
        return result
    }

    public func set(_ value: UserPresence, for key: BareJID) {
        write(key, replacing: true) { $0 = value }
    }

    @discardableResult
    public func remove(_ key: BareJID) -> UserPresence? {
        let removed = update(key) { value in
            defer { value = nil }
            return value
        }
        if removed == nil {
            // A caller's removal also forgets a loss: the user is unknown now, not lost.
            state.withLock { list in
                if let cause = list.ledger.forget(key) { changes.publishForgottenLoss(key, cause: cause) }
            }
            changes.deliver()
        }
        return removed
    }

    public func removeAll() {
        state.withLock { list in
            while let tail = list.tail { list.evict(RecencyList.Record(pointer: tail), .explicit) }
            // Pinned users are not in the recency list; the caller's removal takes them too (their pins stay).
            var pinned: [RecencyList.Record] = []
            list.table.forEachRecord { pinned.append($0) }
            for record in pinned { list.evict(record, .explicit) }
            list.ledger.forgetAll()
        }
        changes.deliver()
    }

    public var count: Int {
        let count = state.withLock { list in
            list.purgeExpired()
            return list.table.count
        }
        changes.deliver()
        return count
    }

    public func update<R>(_ key: BareJID, _ body: (inout UserPresence?) -> R) -> R {
        write(key, replacing: false, body)
    }

    @discardableResult
    public func handle(_ pressure: MemoryPressure) -> PressureResponse {
        let fraction = warningRetainFraction
        let response = state.withLock { list in
            list.purgeExpired()
            list.ledger.recordPressure(pressure)
            let entriesBefore = list.table.count
            let bytesBefore = list.totalCost
            let keep: Int
            switch pressure {
            case .normal: keep = entriesBefore
            case .warning: keep = Int(Double(entriesBefore) * fraction)
            case .critical: keep = 0
            }
            while list.table.count > keep, let tail = list.tail {
                list.evict(RecencyList.Record(pointer: tail), .pressure)
            }
            return PressureResponse(
                level: pressure, evicted: entriesBefore - list.table.count, entriesBefore: entriesBefore,
                entriesAfter: list.table.count, bytesBefore: bytesBefore, bytesAfter: list.totalCost, overBudget: false)
        }
        changes.deliver()
        return response
    }

    public var statistics: StorageStatistics {
        let statistics = state.withLock { list in
            list.purgeExpired()
            var statistics = list.ledger.statistics(entries: list.table.count, estimatedBytes: list.totalCost)
            statistics.pinned = list.pinnedStored
            return statistics
        }
        changes.deliver()
        return statistics
    }

    public var keys: [BareJID] {
        state.withLock { list in
            var keys: [BareJID] = []
            list.table.forEachKey { keys.append($0) }
            return keys
        }
    }

    public func setChangeObserver(_ observer: (@Sendable (StorageChange) -> Void)?) {
        changes.setObserver(observer)
    }

    // MARK: Pins

    public func pin(_ keys: some Sequence<BareJID>) {
        for key in keys {
            withKey(key) { list, bytes, hash in list.pin(key, record: list.table.find(bytes, hash: hash)) }
        }
    }

    public func unpin(_ keys: some Sequence<BareJID>) {
        for key in keys {
            withKey(key) { list, bytes, hash in
                list.unpin(key, record: list.table.find(bytes, hash: hash))
                list.enforceLimits()
            }
        }
        changes.deliver()
    }

    // MARK: Internals

    /// Reads, changes and writes one user; `replacing` counts an overwrite as a `replaced` removal (a `set`).
    private func write<R>(_ key: BareJID, replacing: Bool, _ body: (inout UserPresence?) -> R) -> R {
        let result = withKey(key) { list, bytes, hash in
            let record = list.liveRecord(bytes, hash)
            let old = record.map { list.table.value(of: $0) }
            var value = old
            let result = body(&value)
            switch (record, value) {
            case (let record?, let value?):
                list.replace(record, key: key, hash: hash, with: value)
                if replacing { list.ledger.record(key, .replaced) }
                changes.publishUpdate(key, old: old, new: value)
            case (let record?, nil):
                list.evict(record, .explicit)
            case (nil, let value?):
                let lostCause = list.ledger.cause(of: key)
                list.insert(bytes, key: key, hash: hash, value: value)
                list.ledger.stored(key)
                changes.publishUpdate(key, old: nil, new: value, lostCause: lostCause)
            case (nil, nil):
                break
            }
            list.enforceLimits()
            return result
        }
        changes.deliver()
        return result
    }

    private func withKey<R>(_ key: BareJID, _ body: (RecencyList, UnsafeRawBufferPointer, UInt64) -> R) -> R {
        var raw = key.rawValue
        return raw.withUTF8 { utf8 in
            let bytes = UnsafeRawBufferPointer(utf8)
            let hash = CompactPresenceTable.hash(bytes)
            return state.withLock { body($0, bytes, hash) }
        }
    }
}

/// The LRU's state, only touched under its lock: the table, the recency list threaded through the records'
/// headers (most recent at `head`), the total cost and the ledger.
private final class RecencyList {
    typealias Record = CompactPresenceTable.Record

    /// Record header: previous (more recent) record · next (less recent) record · deadline (ms) · cost.
    static let previousOffset = 0
    static let nextOffset = 8
    static let deadlineOffset = 16
    static let costOffset = 24
    static let headerSize = 32

    let table = CompactPresenceTable(headerSize: RecencyList.headerSize)
    var head: UnsafeMutableRawPointer?
    var tail: UnsafeMutableRawPointer?
    var totalCost = 0
    var ledger = StorageLedger()
    /// Pins per user; a pinned user's record is not in the recency list, so nothing evicts it from the tail.
    var pins: [BareJID: Int] = [:]
    /// Pinned users that are stored.
    var pinnedStored = 0
    let countLimit: Int?
    let costLimit: Int?
    let timeToLive: Int64?
    let now: @Sendable () -> Int64
    let changes: ChangePublisher

    init(
        countLimit: Int?, costLimit: Int?, timeToLive: Int64?, now: @escaping @Sendable () -> Int64,
        changes: ChangePublisher
    ) {
        self.countLimit = countLimit
        self.costLimit = costLimit
        self.timeToLive = timeToLive
        self.now = now
        self.changes = changes
    }

    /// The record of a key that has not expired; an expired one is evicted on the way.
    func liveRecord(_ bytes: UnsafeRawBufferPointer, _ hash: UInt64) -> Record? {
        guard let record = table.find(bytes, hash: hash) else { return nil }
        if timeToLive != nil && RecencyList.deadline(record.pointer) <= now() {
            evict(record, .expired)
            return nil
        }
        return record
    }

    func insert(_ bytes: UnsafeRawBufferPointer, key: BareJID, hash: UInt64, value: UserPresence) {
        let cost = EntryCost.estimate(key, value)
        let inserted = table.insert(bytes, hash: hash, value: value)
        setMetadata(inserted.pointer, cost: cost)
        totalCost += cost
        if isPinned(key) { pinnedStored += 1 } else { linkAtFront(inserted.pointer) }
    }

    @inline(__always)
    func isPinned(_ key: BareJID) -> Bool { !pins.isEmpty && pins[key] != nil }

    func pin(_ key: BareJID, record: Record?) {
        pins[key, default: 0] += 1
        guard pins[key] == 1, let record else { return }
        unlink(record.pointer)
        pinnedStored += 1
    }

    func unpin(_ key: BareJID, record: Record?) {
        guard let count = pins[key] else { return }
        guard count == 1 else {
            pins[key] = count - 1
            return
        }
        pins[key] = nil
        guard let record else { return }
        pinnedStored -= 1
        linkAtFront(record.pointer)
    }

    func replace(_ record: Record, key: BareJID, hash: UInt64, with value: UserPresence) {
        let cost = EntryCost.estimate(key, value)
        let pinned = isPinned(key)
        if !pinned { unlink(record.pointer) }
        let moved = table.replace(record, hash: hash, with: value)
        totalCost += cost - RecencyList.cost(moved.pointer)
        setMetadata(moved.pointer, cost: cost)
        if !pinned { linkAtFront(moved.pointer) }
    }

    func evict(_ record: Record, _ cause: RemovalCause) {
        let key = table.key(of: record)
        if changes.isObserved { changes.publishRemoval(key, old: table.value(of: record), cause: cause) }
        if isPinned(key) { pinnedStored -= 1 } else { unlink(record.pointer) }
        totalCost -= RecencyList.cost(record.pointer)
        table.remove(record, hash: table.hash(of: record))
        ledger.record(key, cause)
    }

    func enforceLimits() {
        if let countLimit {
            while table.count > countLimit, let tail { evict(Record(pointer: tail), .countLimit) }
        }
        if let costLimit {
            while totalCost > costLimit, let tail { evict(Record(pointer: tail), .costLimit) }
        }
    }

    func purgeExpired() {
        guard timeToLive != nil else { return }
        let current = now()
        var expired: [Record] = []
        table.forEachRecord { if RecencyList.deadline($0.pointer) <= current { expired.append($0) } }
        for record in expired { evict(record, .expired) }
    }

    func moveToFront(_ pointer: UnsafeMutableRawPointer, key: BareJID) {
        guard head != pointer, !isPinned(key) else { return }
        unlink(pointer)
        linkAtFront(pointer)
    }

    // MARK: Record headers

    private func setMetadata(_ pointer: UnsafeMutableRawPointer, cost: Int) {
        let deadline = timeToLive.map { now() &+ $0 } ?? Int64.max
        pointer.storeBytes(of: deadline, toByteOffset: RecencyList.deadlineOffset, as: Int64.self)
        pointer.storeBytes(of: Int32(clamping: cost), toByteOffset: RecencyList.costOffset, as: Int32.self)
    }

    private static func deadline(_ pointer: UnsafeMutableRawPointer) -> Int64 {
        pointer.load(fromByteOffset: deadlineOffset, as: Int64.self)
    }

    private static func cost(_ pointer: UnsafeMutableRawPointer) -> Int {
        Int(pointer.load(fromByteOffset: costOffset, as: Int32.self))
    }

    private func link(_ pointer: UnsafeMutableRawPointer, _ offset: Int) -> UnsafeMutableRawPointer? {
        UnsafeMutableRawPointer(bitPattern: pointer.load(fromByteOffset: offset, as: UInt.self))
    }

    private func setLink(_ pointer: UnsafeMutableRawPointer, _ offset: Int, _ target: UnsafeMutableRawPointer?) {
        pointer.storeBytes(of: UInt(bitPattern: target), toByteOffset: offset, as: UInt.self)
    }

    private func linkAtFront(_ pointer: UnsafeMutableRawPointer) {
        setLink(pointer, RecencyList.previousOffset, nil)
        setLink(pointer, RecencyList.nextOffset, head)
        if let head { setLink(head, RecencyList.previousOffset, pointer) }
        head = pointer
        if tail == nil { tail = pointer }
    }

    private func unlink(_ pointer: UnsafeMutableRawPointer) {
        let before = link(pointer, RecencyList.previousOffset)
        let after = link(pointer, RecencyList.nextOffset)
        if let before { setLink(before, RecencyList.nextOffset, after) } else { head = after }
        if let after { setLink(after, RecencyList.previousOffset, before) } else { tail = before }
        setLink(pointer, RecencyList.previousOffset, nil)
        setLink(pointer, RecencyList.nextOffset, nil)
    }
}
