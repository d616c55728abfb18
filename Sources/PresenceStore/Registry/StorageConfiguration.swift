/// A limit a storage may have. The raw value is the command-line flag without its dashes.
public enum StorageLimit: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case countLimit = "count-limit"
    case costLimit = "cost-limit"
    case timeToLive = "ttl"
    case warningRetain = "warning-retain"

    public var description: String { rawValue }
}

/// Everything a storage can be built with; each kind takes the limits it has and ignores the rest.
public struct StorageConfiguration: Hashable, Sendable {
    /// Most users an evicting storage keeps.
    public var countLimit: Int?
    /// Most estimated bytes an evicting storage keeps.
    public var costLimit: Int?
    /// How long after its last write a user expires.
    public var timeToLive: Duration?
    /// The share of users kept on a memory warning (the storage's default when nil).
    public var warningRetainFraction: Double?
    /// Heap bytes above which a non-evicting storage reports itself over budget. Not a limit: every storage
    /// may use it.
    public var memoryBudget: Int?

    public init(
        countLimit: Int? = nil, costLimit: Int? = nil, timeToLive: Duration? = nil,
        warningRetainFraction: Double? = nil, memoryBudget: Int? = nil
    ) {
        self.countLimit = countLimit
        self.costLimit = costLimit
        self.timeToLive = timeToLive
        self.warningRetainFraction = warningRetainFraction
        self.memoryBudget = memoryBudget
    }

    /// Whether `limit` was given.
    public func isSet(_ limit: StorageLimit) -> Bool {
        switch limit {
        case .countLimit: countLimit != nil
        case .costLimit: costLimit != nil
        case .timeToLive: timeToLive != nil
        case .warningRetain: warningRetainFraction != nil
        }
    }
}
