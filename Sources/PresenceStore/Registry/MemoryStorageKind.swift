/// A kind of storage the tools can build by name: what it is called, whether it evicts, which limits it has,
/// and how to make one. Each storage declares its kind beside itself, and ``MemoryStorageRegistry`` lists them.
public struct MemoryStorageKind: Sendable, Hashable, CustomStringConvertible {
    /// The name in reports and on the command line (`--storage NAME`).
    public let name: String
    /// One line for help texts.
    public let summary: String
    /// Whether the storage drops users on its own. A non-evicting storage is the reference the others are
    /// measured against.
    public let evicts: Bool
    /// The limits of ``StorageConfiguration`` this storage honours; the others do not apply to it.
    public let limits: Set<StorageLimit>
    /// Whether the storage keeps users outside memory (a ``TieredStorage``): it is audited against a separate
    /// truth even though it never loses a user, because reading back from disk is what the audit checks.
    public let hasDiskTier: Bool
    private let factory: @Sendable (StorageConfiguration) throws -> any MemoryStorage

    public init(
        name: String, summary: String, evicts: Bool, limits: Set<StorageLimit>, hasDiskTier: Bool = false,
        make factory: @escaping @Sendable (StorageConfiguration) throws -> any MemoryStorage
    ) {
        self.name = name
        self.summary = summary
        self.evicts = evicts
        self.limits = limits
        self.hasDiskTier = hasDiskTier
        self.factory = factory
    }

    /// A new, empty storage of this kind with the limits it has out of `configuration`. Throws when the storage
    /// needs a resource it cannot get (a disk tier's scratch file on a full or unwritable disk); memory-only kinds
    /// never throw.
    public func make(_ configuration: StorageConfiguration = StorageConfiguration()) throws -> any MemoryStorage {
        try factory(configuration)
    }

    /// The limits set in `configuration` that this kind does not have, for reports to name.
    public func limitsNotApplicable(in configuration: StorageConfiguration) -> [StorageLimit] {
        StorageLimit.allCases.filter { configuration.isSet($0) && !limits.contains($0) }
    }

    public var description: String { name }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
}
