import ArgumentParser
import PresenceService

/// The query API's limits' flags, against clients that ask too much or too slowly.
struct HTTPLimitOptions: ParsableArguments, SettingFlags {
    @Option(name: SettingKeys.httpMaxBatch.flag, help: SettingKeys.httpMaxBatch.help)
    var maxBatchJIDs: Int?

    @Option(name: SettingKeys.httpMaxConnections.flag, help: SettingKeys.httpMaxConnections.help)
    var maxConnections: Int?

    @Option(name: SettingKeys.httpHeaderTimeout.flag, help: SettingKeys.httpHeaderTimeout.help)
    var headerTimeoutSeconds: Double?

    func record(into flags: inout FlagLayer) {
        flags.record(SettingKeys.httpMaxBatch, maxBatchJIDs)
        flags.record(SettingKeys.httpMaxConnections, maxConnections)
        flags.record(SettingKeys.httpHeaderTimeout, headerTimeoutSeconds)
    }
}

extension HTTPLimits {
    /// The limits in force.
    init(_ settings: Settings) throws {
        let maxBatchJIDs = try settings(SettingKeys.httpMaxBatch)
        let maxConnections = try settings(SettingKeys.httpMaxConnections)
        let headerTimeout = try settings(SettingKeys.httpHeaderTimeout)
        self.init(
            maxBatchJIDs: maxBatchJIDs, maxConnections: maxConnections,
            headerTimeout: .milliseconds(Int64(headerTimeout * 1000)))
    }
}
