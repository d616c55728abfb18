import PresenceStore

/// What an evicting storage's losses would cost if they were refilled from the presence server: the probes a
/// `cache-else-probe` lookup (``LookupPolicy/cacheElseProbe``) sends to read every user once, in JID order, after
/// a replay.
///
/// Each refill is stored like any update, so in a full storage it evicts someone else, who costs a probe in turn
/// when read: the count includes that cascade, which is what makes a storage far smaller than its users expensive
/// to read even when nothing is lost for good.
public struct RefillCost: Hashable, Sendable {
    /// Users read.
    public var users: Int
    /// Users the storage could not answer: one probe each.
    public var probes: Int

    /// Reads every user of `truth` from `storage`, storing the truth's value for each one it lost or never had
    /// (what the probe's answer would store). Changes the storage: run it after the audit.
    public static func measure(readingEveryoneIn storage: any MemoryStorage, truth: any MemoryStorage) -> RefillCost {
        var probes = 0
        let keys = truth.keys.sorted()
        for key in keys {
            guard case .present = storage.lookup(key) else {
                probes += 1
                storage.set(truth.get(key)!, for: key)
                continue
            }
        }
        return RefillCost(users: keys.count, probes: probes)
    }
}
