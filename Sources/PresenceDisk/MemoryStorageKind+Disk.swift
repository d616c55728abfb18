import Foundation
import PresenceStore

extension MemoryStorageKind {
    /// `KIND+disk`: the kind with a disk tier under it, in a scratch directory of its own that goes when the
    /// storage is closed (for `replay` and `compare`; `serve --data-dir` opens a lasting one). Never loses a user
    /// to eviction: what memory drops is read back from disk.
    public func withDiskTier(_ configuration: TieredStorage.Configuration = .init()) -> MemoryStorageKind {
        let memoryKind = self
        return MemoryStorageKind(
            name: name + "+disk", summary: "\(name) with a disk tier under it", evicts: false, limits: limits,
            hasDiskTier: true
        ) { storageConfiguration in
            try Self.scratchTier(memory: memoryKind.make(storageConfiguration), configuration: configuration)
        }
    }

    /// `disk`: no memory tier; every read the write-behind buffer cannot answer goes to the disk.
    public static func diskOnly(_ configuration: TieredStorage.Configuration = .init()) -> MemoryStorageKind {
        MemoryStorageKind(
            name: "disk", summary: "no memory tier: every read goes to the disk", evicts: false, limits: [],
            hasDiskTier: true
        ) { _ in
            try scratchTier(memory: nil, configuration: configuration)
        }
    }

    /// The kinds with a disk tier the tools know by name: `disk`, and each registered kind with `+disk`.
    public static func diskKinds(_ configuration: TieredStorage.Configuration = .init()) -> [MemoryStorageKind] {
        MemoryStorageRegistry.kinds.map { $0.withDiskTier(configuration) } + [.diskOnly(configuration)]
    }

    /// A kind by name, with or without a disk tier.
    public static func named(_ name: String, disk configuration: TieredStorage.Configuration = .init())
        -> MemoryStorageKind?
    {
        MemoryStorageRegistry.kind(named: name) ?? diskKinds(configuration).first { $0.name == name }
    }

    /// A tier in a new directory under the temporary directory (`TMPDIR`), removed when the tier closes. A full or
    /// unwritable temporary directory is an error naming the file, as for a lasting tier.
    private static func scratchTier(memory: (any MemoryStorage)?, configuration: TieredStorage.Configuration)
        throws -> TieredStorage
    {
        let directory = NSTemporaryDirectory() + "presence-tier-\(UUID().uuidString)"
        let store = try SQLitePresenceStore(directory: directory, removesDirectoryOnClose: true)
        return try TieredStorage(memory: memory, disk: store, configuration: configuration)
    }
}
