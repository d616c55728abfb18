import PresenceStore

/// How a storage compares with the truth: what it kept, what it lost and what it holds wrongly.
public struct AuditReport: Hashable, Sendable {
    public var storage: String
    /// Users in the truth.
    public var users: Int
    /// Users the storage holds with the value the truth has.
    public var retained: Int
    /// Users in the truth the storage does not hold, sorted.
    public var lost: [BareJID]
    /// Users the storage holds with a value that differs from the truth (for example rebuilt from one resource
    /// by an update that arrived after the user was evicted), sorted.
    public var stale: [BareJID]
    /// Lost users by the cause the storage gives (nil: it does not know it lost them).
    public var lostByCause: [RemovalCause?: Int]
    /// Removals the storage made, by cause.
    public var removals: [RemovalCause: Int]

    /// `lost / users`, 0 for no users.
    public var lossRate: Double { users == 0 ? 0 : Double(lost.count) / Double(users) }

    /// Removals the storage decided on its own.
    public var evictions: [RemovalCause: Int] { removals.filter { $0.key.isEviction } }
}
