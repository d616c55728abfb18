import ArgumentParser
import PresenceStore

/// The disk tier's flags: where it lives and how often it is written.
struct DiskOptions: ParsableArguments, SettingFlags {
    @Option(name: SettingKeys.dataDirectory.flag, help: SettingKeys.dataDirectory.help)
    var dataDirectory: String?

    @Option(name: SettingKeys.diskFlushInterval.flag, help: SettingKeys.diskFlushInterval.help)
    var flushIntervalMilliseconds: Int?

    @Option(name: SettingKeys.diskFlushDirty.flag, help: SettingKeys.diskFlushDirty.help)
    var flushDirty: Int?

    @Flag(name: SettingKeys.diskReset.flag, inversion: .prefixedNo, help: SettingKeys.diskReset.help)
    var reset: Bool?

    func record(into flags: inout FlagLayer) {
        flags.record(SettingKeys.dataDirectory, dataDirectory)
        flags.record(SettingKeys.diskFlushInterval, flushIntervalMilliseconds)
        flags.record(SettingKeys.diskFlushDirty, flushDirty)
        flags.record(SettingKeys.diskReset, reset)
    }
}

/// The disk tier in force: its directory (none without a tier), whether to start it empty, and its flushing.
struct DiskTierSettings {
    let dataDirectory: String?
    let reset: Bool
    let configuration: TieredStorage.Configuration

    init(_ settings: Settings) throws {
        dataDirectory = try settings(SettingKeys.dataDirectory)
        reset = try settings(SettingKeys.diskReset)
        let flushInterval = try settings(SettingKeys.diskFlushInterval)
        let flushDirty = try settings(SettingKeys.diskFlushDirty)
        if reset && dataDirectory == nil { throw ValidationError("--disk-reset needs --data-dir") }
        configuration = TieredStorage.Configuration(
            flushInterval: .milliseconds(flushInterval), flushDirtyThreshold: flushDirty)
    }
}
