import PresenceStore

/// Compares a storage with the truth: the per-user values a store that never evicts would hold after the same
/// updates.
public enum PresenceAudit {
    /// Compares `storage` with a truth kept in a storage that never evicts.
    public static func audit(_ storage: any MemoryStorage, truth: any MemoryStorage) -> AuditReport {
        audit(storage, truthKeys: truth.keys) { truth.get($0)! }
    }

    /// Compares `storage` with a truth kept as a plain map.
    public static func audit(_ storage: any MemoryStorage, truth: [BareJID: UserPresence]) -> AuditReport {
        audit(storage, truthKeys: Array(truth.keys)) { truth[$0]! }
    }

    /// The audit of a storage that is its own truth (``ReplayTruth/storage``): every user it holds is retained.
    public static func auditOfTruth(_ storage: any MemoryStorage) -> AuditReport {
        let statistics = storage.statistics
        return AuditReport(
            storage: storage.name, users: statistics.entries, retained: statistics.entries, lost: [], stale: [],
            lostByCause: [:], removals: statistics.removals)
    }

    private static func audit(
        _ storage: any MemoryStorage, truthKeys: [BareJID], truth: (BareJID) -> UserPresence
    ) -> AuditReport {
        var retained = 0
        var lost: [BareJID] = []
        var stale: [BareJID] = []
        var lostByCause: [RemovalCause?: Int] = [:]
        // In JID order: a lookup may count as a use (the LRU's recency), so any order but a fixed one would make
        // what follows the audit (a refill measurement) differ from run to run.
        for key in truthKeys.sorted() {
            let expected = truth(key)
            switch storage.lookup(key) {
            case .present(let held):
                if held.isEquivalent(to: expected) { retained += 1 } else { stale.append(key) }
            case .lost(let cause):
                lost.append(key)
                lostByCause[cause, default: 0] += 1
            case .unknown:
                lost.append(key)
                lostByCause[nil, default: 0] += 1
            }
        }
        return AuditReport(
            storage: storage.name, users: truthKeys.count, retained: retained, lost: lost, stale: stale,
            lostByCause: lostByCause, removals: storage.statistics.removals)
    }
}
