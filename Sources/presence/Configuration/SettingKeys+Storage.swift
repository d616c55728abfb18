import PresenceIngest
import PresenceStore
import XMPPStream

/// Storage, disk tier, memory and parser keys (shared by `serve` and the offline commands).
extension SettingKeys {
    static let storage = SettingKey<StorageName>("storage", "The storage that keeps the statuses", default: .default)

    static let countLimit = SettingKey<Int?>(
        "count-limit", "Most users an evicting storage keeps (nscache, lru)", default: nil, bounds: .atLeast(1))
    static let costLimit = SettingKey<ByteSize?>(
        "cost-limit", "Most estimated bytes an evicting storage keeps, e.g. 64MiB (nscache, lru)", default: nil,
        bounds: .atLeast(1, "byte"))
    static let timeToLive = SettingKey<Int?>(
        "ttl", "Seconds after its last update a user expires (lru)", default: nil, bounds: .atLeast(1, "second"))
    static let warningRetain = SettingKey<Double?>(
        "warning-retain", "Share of users the LRU keeps on a memory warning", default: nil, shown: "0.5",
        bounds: .between(0, 1))

    static let dataDirectory = SettingKey<String?>(
        "data-dir",
        "Keep a disk tier in this directory (created if missing; one process per directory): statuses survive "
            + "restarts and crashes, and what an evicting storage drops is read back from disk",
        default: nil)
    static let diskFlushInterval = SettingKey<Int>(
        "disk-flush-interval", "Most milliseconds a changed status waits in memory before it is written to disk",
        default: Int(TieredStorage.Configuration.defaultFlushInterval / .milliseconds(1)),
        bounds: .between(1, 3_600_000, "milliseconds"))
    static let diskFlushDirty = SettingKey<Int>(
        "disk-flush-dirty", "Changes waiting for the disk that start a write before the interval is up",
        default: TieredStorage.Configuration.defaultFlushDirtyThreshold, bounds: .atLeast(1))
    static let diskReset = SettingKey<Bool>(
        "disk-reset", "Set the disk tier's file aside (renamed, never deleted) and start with an empty tier",
        default: false)

    static let memoryBudget = SettingKey<ByteSize?>(
        "memory-budget", "Resident memory budget for the process, e.g. 512MiB: warning from 85%, critical at 100%",
        default: nil, bounds: .atLeast(1, "byte"))
    static let psi = SettingKey<Bool>(
        "psi", "React to real kernel memory pressure (Linux PSI, cgroup v2 memory.events) where available",
        default: false)

    static let maxStanzaBytes = SettingKey<Int>(
        "max-stanza-bytes", "Largest stanza in raw input bytes", default: XMPPStreamLimits.defaultMaxStanzaBytes,
        bounds: .atLeast(64))
    static let maxDepth = SettingKey<Int>(
        "max-depth", "Deepest element nesting inside a stanza", default: XMPPStreamLimits.defaultMaxElementDepth,
        bounds: .atLeast(1))
    static let maxChildren = SettingKey<Int>(
        "max-children", "Most elements inside one stanza", default: XMPPStreamLimits.defaultMaxChildElements,
        bounds: .atLeast(0))
    static let maxStatusBytes = SettingKey<Int>(
        "max-status-bytes", "Statuses are cut to this many bytes", default: PresenceDecoder.defaultMaximumStatusBytes,
        bounds: .atLeast(0))
}
