import PresenceModel

/// The accounting every storage keeps the same way: removals by cause, pressure events by level, and the users
/// it dropped on its own, so that a miss for one of them answers `lost` rather than a silent "unknown" (what
/// callers of evicting caches ask for: nicklockwood/LRUCache PR #19).
///
/// Compact: one dictionary entry per lost user that shares the evicted key's string storage, and an entry is
/// forgotten as soon as the user is stored again or removed by the caller. Not thread-safe; a storage keeps it
/// under its lock.
struct StorageLedger {
    private var causes: [BareJID: RemovalCause] = [:]
    /// Removals by cause since the storage was created.
    private(set) var removals: [RemovalCause: Int] = [:]
    /// Pressure events handled, by level.
    private(set) var pressureEvents: [MemoryPressure: Int] = [:]

    var lostCount: Int { causes.count }

    /// Why the storage lost `key`: nil when it did not, `.some(nil)` never (every loss has a cause here).
    func cause(of key: BareJID) -> RemovalCause?? {
        causes.isEmpty ? nil : causes[key].map { .some($0) }
    }

    /// Records a removal; evictions make the key lost, the caller's removals forget it.
    mutating func record(_ key: BareJID, _ cause: RemovalCause) {
        removals[cause, default: 0] += 1
        if cause.isEviction { causes[key] = cause } else if !causes.isEmpty { causes[key] = nil }
    }

    /// Records `count` removals of one cause whose keys are not tracked (the caller emptied the storage).
    mutating func record(_ count: Int, _ cause: RemovalCause) {
        guard count > 0 else { return }
        removals[cause, default: 0] += count
    }

    /// The key holds a value again.
    mutating func stored(_ key: BareJID) {
        if !causes.isEmpty { causes[key] = nil }
    }

    /// The caller removed a user the storage had lost: it is no longer lost, only unknown. Returns the cause
    /// it was lost for, if it was.
    mutating func forget(_ key: BareJID) -> RemovalCause? {
        causes.isEmpty ? nil : causes.removeValue(forKey: key)
    }

    mutating func forgetAll() { causes.removeAll() }

    mutating func recordPressure(_ level: MemoryPressure) { pressureEvents[level, default: 0] += 1 }

    func statistics(entries: Int, estimatedBytes: Int) -> StorageStatistics {
        StorageStatistics(
            entries: entries, estimatedBytes: estimatedBytes, removals: removals, lost: lostCount,
            pressureEvents: pressureEvents)
    }
}
