import Foundation
import PresenceModel

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
///   cache from it deadlocks. The delegate here only notes the key.
/// - Its entries hold their neighbours in its cost-sorted list strongly in both directions and nothing breaks
///   those cycles when the cache is freed: an `NSCache` freed while it holds two or more entries leaks them all,
///   keys and values (found by LeakSanitizer). This storage empties its cache when it is freed.
///
/// Memory pressure is forwarded as iOS apps do on a memory warning (SDWebImage, Kingfisher): `removeAllObjects`.
public final class NSCacheMemoryStorage: MemoryStorage {
    public let name = MemoryStorageKind.nscache.name
    /// NSCache's `countLimit` (nil: none).
    public let countLimit: Int?
    /// NSCache's `totalCostLimit` in estimated bytes (nil: none).
    public let costLimit: Int?

    private final class Entry {
        let key: BareJID
        let value: UserPresence
        init(key: BareJID, value: UserPresence) {
            self.key = key
            self.value = value
        }
    }

    /// Notes the entries NSCache evicts. NSCache calls it only from inside `setObject`, which this storage
    /// calls with its lock held, so `pending` needs no lock of its own.
    private final class EvictionRecorder: NSObject, NSCacheDelegate {
        var pending: [Entry] = []

        func cache(_ cache: NSCache<AnyObject, AnyObject>, willEvictObject object: Any) {
            guard let entry = object as? Entry else { return }
            pending.append(entry)
        }
    }

    /// Everything that changes, reachable only under the storage's lock (NSCache itself is not Sendable).
    private final class State {
        let cache = NSCache<NSString, Entry>()
        let recorder = EvictionRecorder()
        /// Keys NSCache holds, with their cost: NSCache cannot enumerate or count itself.
        var present: [BareJID: Int] = [:]
        var totalCost = 0
        var ledger = StorageLedger()

        /// `removeAllObjects` is the only NSCache call that unlinks its entries from each other; without it they
        /// outlive the cache.
        deinit { cache.removeAllObjects() }
    }

    private let state: Locked<State>
    private let changes = ChangePublisher()

    public init(countLimit: Int? = nil, costLimit: Int? = nil) {
        self.countLimit = countLimit
        self.costLimit = costLimit
        let state = State()
        state.cache.countLimit = max(countLimit ?? 0, 0)
        state.cache.totalCostLimit = max(costLimit ?? 0, 0)
        state.cache.delegate = state.recorder
        self.state = Locked(state)
    }

    public func lookup(_ key: BareJID) -> StoredPresence {
        state.withLock { state in
            if let entry = state.cache.object(forKey: key.rawValue as NSString) { return .present(entry.value) }
            if let cause = state.ledger.cause(of: key) { return .lost(cause) }
            return .unknown
        }
    }

    public func set(_ value: UserPresence, for key: BareJID) {
        state.withLock { store(value, for: key, replacing: true, in: $0) }
        changes.deliver()
    }

    @discardableResult
    public func remove(_ key: BareJID) -> UserPresence? {
        let value = state.withLock { state -> UserPresence? in
            let value = state.cache.object(forKey: key.rawValue as NSString)?.value
            state.cache.removeObject(forKey: key.rawValue as NSString)
            guard let cost = state.present.removeValue(forKey: key) else {
                // A caller's removal also forgets a loss: the user is unknown now, not lost.
                if let cause = state.ledger.forget(key) { changes.publishForgottenLoss(key, cause: cause) }
                return value
            }
            state.totalCost -= cost
            state.ledger.record(key, .explicit)
            if let value { changes.publishRemoval(key, old: value, cause: .explicit) }
            return value
        }
        changes.deliver()
        return value
    }

    public func removeAll() {
        state.withLock { state in
            if changes.isObserved {
                for key in state.present.keys {
                    if let entry = state.cache.object(forKey: key.rawValue as NSString) {
                        changes.publishRemoval(key, old: entry.value, cause: .explicit)
                    }
                }
            }
            state.cache.removeAllObjects()
            state.ledger.record(state.present.count, .explicit)
            state.present.removeAll()
            state.totalCost = 0
            state.ledger.forgetAll()
        }
        changes.deliver()
    }

    public var count: Int { state.withLock { $0.present.count } }

    public func update<R>(_ key: BareJID, _ body: (inout UserPresence?) -> R) -> R {
        let result = state.withLock { state in
            let old = state.cache.object(forKey: key.rawValue as NSString)?.value
            var value = old
            let result = body(&value)
            if let value {
                store(value, for: key, replacing: false, in: state)
            } else if let old {
                state.cache.removeObject(forKey: key.rawValue as NSString)
                if let cost = state.present.removeValue(forKey: key) { state.totalCost -= cost }
                state.ledger.record(key, .explicit)
                changes.publishRemoval(key, old: old, cause: .explicit)
            }
            return result
        }
        changes.deliver()
        return result
    }

    /// Warning and critical both empty the cache, as apps do on a memory warning.
    @discardableResult
    public func handle(_ pressure: MemoryPressure) -> PressureResponse {
        let response = state.withLock { state in
            state.ledger.recordPressure(pressure)
            let entriesBefore = state.present.count
            let bytesBefore = state.totalCost
            guard pressure != .normal, entriesBefore > 0 else {
                return PressureResponse(
                    level: pressure, evicted: 0, entriesBefore: entriesBefore, entriesAfter: entriesBefore,
                    bytesBefore: bytesBefore, bytesAfter: bytesBefore, overBudget: false)
            }
            for key in state.present.keys {
                if changes.isObserved, let entry = state.cache.object(forKey: key.rawValue as NSString) {
                    changes.publishRemoval(key, old: entry.value, cause: .pressure)
                }
                state.ledger.record(key, .pressure)
            }
            state.cache.removeAllObjects()
            state.present.removeAll()
            state.totalCost = 0
            return PressureResponse(
                level: pressure, evicted: entriesBefore, entriesBefore: entriesBefore, entriesAfter: 0,
                bytesBefore: bytesBefore, bytesAfter: 0, overBudget: false)
        }
        changes.deliver()
        return response
    }

    public var statistics: StorageStatistics {
        state.withLock { $0.ledger.statistics(entries: $0.present.count, estimatedBytes: $0.totalCost) }
    }

    public var keys: [BareJID] { state.withLock { Array($0.present.keys) } }

    public func setChangeObserver(_ observer: (@Sendable (StorageChange) -> Void)?) {
        changes.setObserver(observer)
    }

    // MARK: Internals (called with the lock held)

    /// Stores through NSCache and accounts for what its `setObject` evicted; `replacing` counts an overwrite as
    /// a `replaced` removal (a `set`, not an `update`).
    private func store(_ value: UserPresence, for key: BareJID, replacing: Bool, in state: State) {
        let cost = EntryCost.estimate(key, value)
        let lostCause = state.present[key] == nil ? state.ledger.cause(of: key) : nil
        let old = changes.isObserved ? state.cache.object(forKey: key.rawValue as NSString)?.value : nil
        let entriesBefore = state.present.count
        let grows = state.present[key] == nil
        // Costs only matter to NSCache with a cost limit, and they cost: its cost-sorted insert walks the list,
        // O(n) per set when costs vary (measured: 100k users make every set a 100k-node walk). Without a cost
        // limit, pass 0 as an app without one would, which keeps setObject O(1).
        state.cache.setObject(
            Entry(key: key, value: value), forKey: key.rawValue as NSString, cost: costLimit == nil ? 0 : cost)
        if let previous = state.present.updateValue(cost, forKey: key) {
            state.totalCost -= previous
            if replacing { state.ledger.record(key, .replaced) }
        }
        state.totalCost += cost
        state.ledger.stored(key)
        changes.publishUpdate(key, old: old, new: value, lostCause: lostCause)
        // NSCache does not say why it evicted: the count limit if it was full, otherwise the cost limit.
        let overCount = countLimit.map { $0 > 0 && entriesBefore + (grows ? 1 : 0) > $0 } ?? false
        let cause: RemovalCause = overCount ? .countLimit : .costLimit
        let evicted = state.recorder.pending
        state.recorder.pending.removeAll(keepingCapacity: true)
        for entry in evicted {
            guard let evictedCost = state.present.removeValue(forKey: entry.key) else { continue }
            state.totalCost -= evictedCost
            state.ledger.record(entry.key, cause)
            changes.publishRemoval(entry.key, old: entry.value, cause: cause)
        }
    }
}
