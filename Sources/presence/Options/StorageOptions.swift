import ArgumentParser
import PresenceDisk
import PresenceStore

/// A storage kind named on the command line: any name in ``MemoryStorageRegistry``, the same with `+disk` (a disk
/// tier under it), or `disk` (the disk tier alone).
struct StorageName: ExpressibleByArgument, CustomStringConvertible {
    let kind: MemoryStorageKind
    /// The memory tier's kind: the kind itself without a disk tier, nil for `disk` alone.
    let memoryKind: MemoryStorageKind?
    let hasDiskTier: Bool

    init(_ kind: MemoryStorageKind) {
        self.kind = kind
        memoryKind = kind
        hasDiskTier = false
    }

    init?(argument: String) {
        guard let kind = MemoryStorageKind.named(argument) else { return nil }
        self.kind = kind
        hasDiskTier = MemoryStorageRegistry.kind(named: argument) == nil
        memoryKind = hasDiskTier ? MemoryStorageRegistry.kind(named: String(argument.dropLast("+disk".count))) : kind
    }

    static var allValueStrings: [String] {
        MemoryStorageRegistry.kinds.map(\.name) + MemoryStorageKind.diskKinds().map(\.name)
    }

    /// `dictionary, nscache or lru`, for help texts.
    static var choices: String {
        let names = allValueStrings
        return names.count > 1 ? names.dropLast().joined(separator: ", ") + " or " + names.last! : names.joined()
    }

    static let `default` = StorageName(.dictionary)

    var description: String { kind.name }
}

/// The storage limits; each applies only to the storages that have it, and a report names the ones that don't.
struct StorageOptions: ParsableArguments {
    @Option(name: .customLong("count-limit"), help: "Most users an evicting storage keeps (nscache, lru).")
    var countLimit: Int?

    @Option(
        name: .customLong("cost-limit"),
        help: "Most estimated bytes an evicting storage keeps, e.g. 64MiB (nscache, lru).")
    var costLimit: ByteSize?

    @Option(name: .customLong("ttl"), help: "Seconds after its last update a user expires (lru).")
    var timeToLive: Int?

    @Option(
        name: .customLong("warning-retain"), help: "Share of users the LRU keeps on a memory warning (default 0.5).")
    var warningRetainFraction: Double?

    func validate() throws {
        if let countLimit, countLimit < 1 { throw ValidationError("--count-limit must be at least 1") }
        if let costLimit, costLimit.bytes < 1 { throw ValidationError("--cost-limit must be at least 1 byte") }
        if let timeToLive, timeToLive < 1 { throw ValidationError("--ttl must be at least 1 second") }
        if let warningRetainFraction, !(0 ... 1).contains(warningRetainFraction) {
            throw ValidationError("--warning-retain must be between 0 and 1")
        }
    }

    func configuration(memoryBudget: Int?) -> StorageConfiguration {
        StorageConfiguration(
            countLimit: countLimit, costLimit: costLimit?.bytes, timeToLive: timeToLive.map { .seconds($0) },
            warningRetainFraction: warningRetainFraction, memoryBudget: memoryBudget)
    }

    /// The limits given that `kind` does not have, as the names of their flags.
    func notApplicable(to kind: MemoryStorageKind) -> [String] {
        kind.limitsNotApplicable(in: configuration(memoryBudget: nil)).map(\.rawValue)
    }
}
