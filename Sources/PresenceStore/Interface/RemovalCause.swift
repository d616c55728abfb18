/// Why an entry left a storage: the caller's doing (`explicit`, `replaced`) or the storage's own (an eviction).
/// The vocabulary follows Caffeine's removal causes.
public enum RemovalCause: String, Hashable, Sendable, CaseIterable, Comparable, CustomStringConvertible {
    /// The caller removed it.
    case explicit
    /// The caller stored a new value under the same key.
    case replaced
    /// The storage holds more entries than its count limit.
    case countLimit = "count-limit"
    /// The storage holds more bytes than its cost limit.
    case costLimit = "cost-limit"
    /// The entry outlived its time to live.
    case expired
    /// Memory pressure made the storage drop it.
    case pressure

    /// Whether the storage lost the entry on its own (everything but `explicit` and `replaced`): such a key
    /// answers ``StoredPresence/lost(_:)`` until it is stored again.
    public var isEviction: Bool { self != .explicit && self != .replaced }

    public var description: String { rawValue }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
