import ArgumentParser
import PresenceDisk
import PresenceStore

/// A storage kind named on the command line: any name in ``MemoryStorageRegistry``, the same with `+disk` (a disk
/// tier under it), or `disk` (the disk tier alone).
struct StorageName: ExpressibleByArgument, Sendable, CustomStringConvertible {
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

/// The storage limits' flags.
struct StorageOptions: ParsableArguments, SettingFlags {
    @Option(name: SettingKeys.countLimit.flag, help: SettingKeys.countLimit.help)
    var countLimit: Int?

    @Option(name: SettingKeys.costLimit.flag, help: SettingKeys.costLimit.help)
    var costLimit: ByteSize?

    @Option(name: SettingKeys.timeToLive.flag, help: SettingKeys.timeToLive.help)
    var timeToLive: Int?

    @Option(name: SettingKeys.warningRetain.flag, help: SettingKeys.warningRetain.help)
    var warningRetainFraction: Double?

    func record(into flags: inout FlagLayer) {
        flags.record(SettingKeys.countLimit, countLimit)
        flags.record(SettingKeys.costLimit, costLimit)
        flags.record(SettingKeys.timeToLive, timeToLive)
        flags.record(SettingKeys.warningRetain, warningRetainFraction)
    }
}

/// The storage limits in force; each applies only to the storages that have it, and a report names the ones that
/// don't.
struct StorageLimits {
    let countLimit: Int?
    let costLimit: Int?
    let timeToLive: Int?
    let warningRetainFraction: Double?

    init(_ settings: Settings) throws {
        countLimit = try settings(SettingKeys.countLimit)
        costLimit = try settings(SettingKeys.costLimit)?.bytes
        timeToLive = try settings(SettingKeys.timeToLive)
        warningRetainFraction = try settings(SettingKeys.warningRetain)
    }

    func configuration(memoryBudget: Int?) -> StorageConfiguration {
        StorageConfiguration(
            countLimit: countLimit, costLimit: costLimit, timeToLive: timeToLive.map { .seconds($0) },
            warningRetainFraction: warningRetainFraction, memoryBudget: memoryBudget)
    }

    /// The limits given that `kind` does not have, as the names of their flags.
    func notApplicable(to kind: MemoryStorageKind) -> [String] {
        kind.limitsNotApplicable(in: configuration(memoryBudget: nil)).map(\.rawValue)
    }
}
