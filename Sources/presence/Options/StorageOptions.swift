import ArgumentParser
import PresenceStore

/// Which storage to use.
enum StorageChoice: String, ExpressibleByArgument, CaseIterable {
    case dictionary, nscache, lru
}

/// The storage limits; each applies only to the storages that have it, and a report names the ones that don't.
struct StorageOptions: ParsableArguments {
    @Option(name: .customLong("count-limit"), help: "Most users an evicting storage keeps (nscache, lru).")
    var countLimit: Int?

    @Option(name: .customLong("cost-limit"), help: "Most estimated bytes an evicting storage keeps, e.g. 64MiB (nscache, lru).")
    var costLimit: ByteSize?

    @Option(name: .customLong("ttl"), help: "Seconds after its last update a user expires (lru).")
    var timeToLive: Int?

    @Option(name: .customLong("warning-retain"), help: "Share of users the LRU keeps on a memory warning (default 0.5).")
    var warningRetainFraction: Double = LRUMemoryStorage.defaultWarningRetainFraction

    func validate() throws {
        if let countLimit, countLimit < 1 { throw ValidationError("--count-limit must be at least 1") }
        if let costLimit, costLimit.bytes < 1 { throw ValidationError("--cost-limit must be at least 1 byte") }
        if let timeToLive, timeToLive < 1 { throw ValidationError("--ttl must be at least 1 second") }
        if !(0 ... 1).contains(warningRetainFraction) { throw ValidationError("--warning-retain must be between 0 and 1") }
    }

    func make(_ choice: StorageChoice, memoryBudget: Int?) -> any MemoryStorage {
        switch choice {
        case .dictionary:
            DictionaryMemoryStorage(memoryBudget: memoryBudget)
        case .nscache:
            NSCacheMemoryStorage(countLimit: countLimit, costLimit: costLimit?.bytes)
        case .lru:
            LRUMemoryStorage(countLimit: countLimit, costLimit: costLimit?.bytes, timeToLive: timeToLive.map { .seconds($0) },
                             warningRetainFraction: warningRetainFraction)
        }
    }

    /// The limits given that `choice` does not have, as the names of their flags.
    func notApplicable(to choice: StorageChoice) -> [String] {
        var names: [String] = []
        switch choice {
        case .dictionary:
            if countLimit != nil { names.append("count-limit") }
            if costLimit != nil { names.append("cost-limit") }
            if timeToLive != nil { names.append("ttl") }
        case .nscache:
            if timeToLive != nil { names.append("ttl") }
        case .lru:
            break
        }
        return names
    }
}
