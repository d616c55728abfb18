import PresenceStore

/// Compares a storage with the truth: the per-user values a store that never evicts would hold after the same
/// updates.
public enum PresenceAudit {
    public static func audit(_ storage: any MemoryStorage, truth: [BareJID: UserPresence]) -> AuditReport {
        var retained = 0
        var lost: [BareJID] = []
        var stale: [BareJID] = []
        var lostByCause: [RemovalCause?: Int] = [:]
        // In JID order: a lookup may count as a use (the LRU's recency), so any order but a fixed one would make
        // what follows the audit (a refill measurement) differ from run to run.
        for key in truth.keys.sorted() {
            let expected = truth[key]!
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
            storage: storage.name, users: truth.count, retained: retained, lost: lost, stale: stale,
            lostByCause: lostByCause, removals: storage.statistics.removals)
    }
}
