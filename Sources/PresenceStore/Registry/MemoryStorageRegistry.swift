/// The storages the tools know by name, in the order reports show them.
///
/// A new storage is one new file (the class and its ``MemoryStorageKind``) plus one line here: the command line,
/// `compare`, the reports and the contract tests all take their list from ``kinds``.
public enum MemoryStorageRegistry {
    public static let kinds: [MemoryStorageKind] = [
        .dictionary,
        .nscache,
        .lru,
    ]

    /// The kind called `name`, if there is one.
    public static func kind(named name: String) -> MemoryStorageKind? {
        kinds.first { $0.name == name }
    }

    /// The non-evicting reference the evicting kinds are compared with.
    public static var reference: MemoryStorageKind? { kinds.first { !$0.evicts } }
}
