/// The users a storage dropped on its own, so that a miss for one of them answers `lost` rather than a silent
/// "unknown" (what callers of evicting caches ask for: nicklockwood/LRUCache PR #19).
///
/// Compact: one dictionary entry per lost user that shares the evicted key's string storage, and an entry is
/// forgotten as soon as the user is stored again or removed by the caller. Not thread-safe; owners guard it.
struct LossLedger {
    private var causes: [BareJID: EvictionCause] = [:]
    /// Removals by cause since the storage was created.
    private(set) var removals: [EvictionCause: Int] = [:]

    var lostCount: Int { causes.count }

    func cause(of key: BareJID) -> EvictionCause?? {
        causes[key].map { .some($0) }
    }

    /// Records a removal; evictions make the key lost.
    mutating func record(_ key: BareJID, _ cause: EvictionCause) {
        removals[cause, default: 0] += 1
        if cause.isEviction { causes[key] = cause } else { causes[key] = nil }
    }

    /// The key holds a value again.
    mutating func stored(_ key: BareJID) {
        if !causes.isEmpty { causes[key] = nil }
    }

    mutating func forgetAll() { causes.removeAll() }

    var lostKeys: [BareJID] { Array(causes.keys) }
}
