/// Why an entry left a storage. The vocabulary follows Caffeine's removal causes.
public enum EvictionCause: String, Hashable, Sendable, CaseIterable, Comparable, CustomStringConvertible {
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

/// One entry leaving a storage, as the removal observer sees it.
public struct RemovalEvent: Hashable, Sendable {
    public var key: BareJID
    public var cause: EvictionCause

    public init(key: BareJID, cause: EvictionCause) {
        self.key = key
        self.cause = cause
    }
}
