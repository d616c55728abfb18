import PresenceStore

/// Where a replay keeps the truth its audit compares the storage with: what a store that never forgets holds
/// after the same updates.
///
/// Keeping a second copy of every user costs as much as the storage itself, so a replay keeps one only where a
/// report needs it.
public enum ReplayTruth: Sendable {
    /// No truth: the replay only fills the storage (`presence query --input` reads the storage and nothing else).
    /// ``PresenceReplay/audit()`` and ``PresenceReplay/measureRefill()`` answer nil.
    case none
    /// The storage is the truth: it never evicts (its kind says so, and the storage contract tests prove it), so a
    /// second copy would hold exactly what it holds. The audit finds every user retained without reading them.
    case storage
    /// A second storage that never evicts, fed the same updates at the same times: a compact table (one
    /// allocation per user, like ``DictionaryMemoryStorage``), for a storage that may lose users.
    case separate

    /// The truth a replay into a storage of `kind` needs for an audit: the storage itself when it never evicts and
    /// keeps everything in memory, a separate table otherwise (a disk tier is checked, not trusted).
    public static func forAudit(of kind: MemoryStorageKind) -> ReplayTruth {
        kind.evicts || kind.hasDiskTier ? .separate : .storage
    }
}
