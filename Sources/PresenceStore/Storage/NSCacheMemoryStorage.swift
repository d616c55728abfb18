import Foundation

/// Foundation's `NSCache`, used the way an app uses it, with the bookkeeping that shows what it silently drops.
///
/// What `NSCache` really does on Linux (swift-corelibs-foundation, verified by this package's tests):
/// - It never reacts to memory pressure by itself; it evicts only inside `setObject`, and lowering a limit evicts
///   nothing until the next `setObject`.
/// - It evicts the cheapest entry first, and at equal cost the **newest**: with equal costs a full cache throws
///   away the entry just added. It is not LRU; reads do not protect an entry.
/// - `setObject` walks a cost-sorted list: O(n) when costs rise.
/// - Its delegate's `cache(_:willEvictObject:)` runs for those evictions only (not for `removeObject`,
///   `removeAllObjects` or a replaced key), while its internal non-recursive lock is held: calling back into the
///   cache from it deadlocks. The delegate here only records the key in a separate list.
///
/// Memory pressure is forwarded as iOS apps do on a memory warning (SDWebImage, Kingfisher): `removeAllObjects`.
public final class NSCacheMemoryStorage: MemoryStorage, @unchecked Sendable {
    // @unchecked: NSCache is declared non-Sendable in Swift 6, but corelibs guards every cache operation with its
    // own NSLock; its unlocked properties (limits, delegate) are set once in init, before the storage is shared.
    // Everything of ours that mutates (`present`, `totalCost`, `ledger`, `pressureEvents`, `observer`) is only
    // touched while holding `lock`; the delegate's pending list has its own lock, which is never held while
    // calling into the cache, so the delegate (called under NSCache's lock) cannot deadlock with us.

    public let name = "nscache"
    /// NSCache's `countLimit` (nil: none).
    public let countLimit: Int?
    /// NSCache's `totalCostLimit` in estimated bytes (nil: none).
    public let costLimit: Int?

    private final class Entry {
        let key: BareJID
        let value: UserPresence
        let cost: Int
        init(key: BareJID, value: UserPresence, cost: Int) {
            self.key = key
            self.value = value
            self.cost = cost
        }
    }

    private final class EvictionRecorder: NSObject, NSCacheDelegate, @unchecked Sendable {
        // @unchecked: `pending` is only touched under `lock`.
        private let lock = PthreadMutex()
        private var pending: [BareJID] = []

        func cache(_ cache: NSCache<AnyObject, AnyObject>, willEvictObject object: Any) {
            guard let entry = object as? Entry else { return }
            lock.withLock { pending.append(entry.key) }
        }

        func drain() -> [BareJID] {
            lock.withLock {
                defer { pending.removeAll(keepingCapacity: true) }
                return pending
            }
        }
    }

    private let cache = NSCache<NSString, Entry>()
    private let recorder = EvictionRecorder()
    private let lock = PthreadMutex()
    /// Keys NSCache holds, with their cost: NSCache cannot enumerate or count itself.
    private var present: [BareJID: Int] = [:]
    private var totalCost = 0
    private var ledger = LossLedger()
    private var pressureEvents: [MemoryPressure: Int] = [:]
    private var observer: (@Sendable (RemovalEvent) -> Void)?

    public init(countLimit: Int? = nil, costLimit: Int? = nil) {
        self.countLimit = countLimit
        self.costLimit = costLimit
        cache.countLimit = max(countLimit ?? 0, 0)
        cache.totalCostLimit = max(costLimit ?? 0, 0)
        cache.delegate = recorder
    }

    public func lookup(_ key: BareJID) -> StoredPresence {
        if let entry = cache.object(forKey: key.rawValue as NSString) { return .present(entry.value) }
        return lock.withLock {
            if let cause = ledger.cause(of: key) { return .lost(cause) }
            return .unknown
        }
    }

    public func set(_ value: UserPresence, for key: BareJID) {
        let events = lock.withLock { store(value, for: key, replacing: true) }
        notify(events)
    }

    @discardableResult
    public func remove(_ key: BareJID) -> UserPresence? {
        let (value, events): (UserPresence?, [RemovalEvent]) = lock.withLock {
            let value = cache.object(forKey: key.rawValue as NSString)?.value
            cache.removeObject(forKey: key.rawValue as NSString)
            guard let cost = present.removeValue(forKey: key) else {
                ledger.stored(key)  // a caller's removal also forgets a loss
                return (value, [])
            }
            totalCost -= cost
            ledger.record(key, .explicit)
            return (value, [RemovalEvent(key: key, cause: .explicit)])
        }
        notify(events)
        return value
    }

    public func removeAll() {
        let events: [RemovalEvent] = lock.withLock {
            cache.removeAllObjects()
            let events = observer == nil ? [] : present.keys.map { RemovalEvent(key: $0, cause: .explicit) }
            for key in present.keys { ledger.record(key, .explicit) }
            present.removeAll()
            totalCost = 0
            ledger.forgetAll()
            return events
        }
        notify(events)
    }

    public var count: Int { lock.withLock { present.count } }

    public func update<R>(_ key: BareJID, _ body: (inout UserPresence?) -> R) -> R {
        let (result, events): (R, [RemovalEvent]) = lock.withLock {
            var value = cache.object(forKey: key.rawValue as NSString)?.value
            let existed = value != nil
            let result = body(&value)
            if let value { return (result, store(value, for: key, replacing: false)) }
            guard existed else { return (result, []) }
            cache.removeObject(forKey: key.rawValue as NSString)
            if let cost = present.removeValue(forKey: key) { totalCost -= cost }
            ledger.record(key, .explicit)
            return (result, [RemovalEvent(key: key, cause: .explicit)])
        }
        notify(events)
        return result
    }

    /// Warning and critical both empty the cache, as apps do on a memory warning.
    @discardableResult
    public func handle(_ pressure: MemoryPressure) -> PressureResponse {
        let (response, events): (PressureResponse, [RemovalEvent]) = lock.withLock {
            pressureEvents[pressure, default: 0] += 1
            let entriesBefore = present.count
            let bytesBefore = totalCost
            guard pressure != .normal, entriesBefore > 0 else {
                return (PressureResponse(level: pressure, evicted: 0, entriesBefore: entriesBefore, entriesAfter: entriesBefore,
                                         bytesBefore: bytesBefore, bytesAfter: bytesBefore, overBudget: false), [])
            }
            cache.removeAllObjects()
            let events = present.keys.map { RemovalEvent(key: $0, cause: .pressure) }
            for key in present.keys { ledger.record(key, .pressure) }
            present.removeAll()
            totalCost = 0
            return (PressureResponse(level: pressure, evicted: entriesBefore, entriesBefore: entriesBefore, entriesAfter: 0,
                                     bytesBefore: bytesBefore, bytesAfter: 0, overBudget: false), events)
        }
        notify(events)
        return response
    }

    public var statistics: StorageStatistics {
        lock.withLock {
            StorageStatistics(entries: present.count, estimatedBytes: totalCost, removals: ledger.removals,
                              lost: ledger.lostCount, pressureEvents: pressureEvents)
        }
    }

    public var keys: [BareJID] { lock.withLock { Array(present.keys) } }

    public func setRemovalObserver(_ observer: (@Sendable (RemovalEvent) -> Void)?) {
        lock.withLock { self.observer = observer }
    }

    // MARK: Internals (called with `lock` held)

    /// Stores through NSCache and accounts for what its `setObject` evicted; `replacing` counts an overwrite as
    /// a `replaced` removal (a `set`, not an `update`).
    private func store(_ value: UserPresence, for key: BareJID, replacing: Bool) -> [RemovalEvent] {
        let cost = EntryCost.estimate(key, value)
        let grows = present[key] == nil
        let entriesBefore = present.count
        // Costs only matter to NSCache with a cost limit, and they cost: its cost-sorted insert walks the list,
        // O(n) per set when costs vary (measured: 100k users make every set a 100k-node walk). Without a cost
        // limit, pass 0 as an app without one would, which keeps setObject O(1).
        let nscacheCost = costLimit == nil ? 0 : cost
        cache.setObject(Entry(key: key, value: value, cost: cost), forKey: key.rawValue as NSString, cost: nscacheCost)
        var events: [RemovalEvent] = []
        if let previous = present.updateValue(cost, forKey: key) {
            totalCost -= previous
            if replacing {
                ledger.record(key, .replaced)
                events.append(RemovalEvent(key: key, cause: .replaced))
            }
        }
        totalCost += cost
        ledger.stored(key)
        // NSCache does not say why it evicted: the count limit if it was full, otherwise the cost limit.
        let overCount = countLimit.map { $0 > 0 && entriesBefore + (grows ? 1 : 0) > $0 } ?? false
        let cause: EvictionCause = overCount ? .countLimit : .costLimit
        for evicted in recorder.drain() {
            guard let evictedCost = present.removeValue(forKey: evicted) else { continue }
            totalCost -= evictedCost
            ledger.record(evicted, cause)
            events.append(RemovalEvent(key: evicted, cause: cause))
        }
        return events
    }

    private func notify(_ events: [RemovalEvent]) {
        guard !events.isEmpty, let observer = lock.withLock({ self.observer }) else { return }
        for event in events { observer(event) }
    }
}
