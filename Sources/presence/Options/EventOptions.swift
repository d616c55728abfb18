import ArgumentParser
import PresenceService

/// The change streams' limits' flags (`GET /v1/presence/events`).
struct EventOptions: ParsableArguments, SettingFlags {
    @Option(name: SettingKeys.eventsMaxJIDs.flag, help: SettingKeys.eventsMaxJIDs.help)
    var maxJIDs: Int?

    @Option(name: SettingKeys.eventsMaxStreams.flag, help: SettingKeys.eventsMaxStreams.help)
    var maxStreams: Int?

    @Option(name: SettingKeys.eventsHeartbeat.flag, help: SettingKeys.eventsHeartbeat.help)
    var heartbeatSeconds: Double?

    @Option(name: SettingKeys.eventsWriteTimeout.flag, help: SettingKeys.eventsWriteTimeout.help)
    var writeTimeoutSeconds: Double?

    @Option(name: SettingKeys.eventsHistory.flag, help: SettingKeys.eventsHistory.help)
    var history: Int?

    @Option(name: SettingKeys.eventsRetry.flag, help: SettingKeys.eventsRetry.help)
    var retryMilliseconds: Int?

    func record(into flags: inout FlagLayer) {
        flags.record(SettingKeys.eventsMaxJIDs, maxJIDs)
        flags.record(SettingKeys.eventsMaxStreams, maxStreams)
        flags.record(SettingKeys.eventsHeartbeat, heartbeatSeconds)
        flags.record(SettingKeys.eventsWriteTimeout, writeTimeoutSeconds)
        flags.record(SettingKeys.eventsHistory, history)
        flags.record(SettingKeys.eventsRetry, retryMilliseconds)
    }
}

extension EventStreamConfiguration {
    /// The change streams' limits in force.
    init(_ settings: Settings) throws {
        let retry = try settings(SettingKeys.eventsRetry)
        let maxJIDs = try settings(SettingKeys.eventsMaxJIDs)
        let maxStreams = try settings(SettingKeys.eventsMaxStreams)
        let history = try settings(SettingKeys.eventsHistory)
        let heartbeat = try settings(SettingKeys.eventsHeartbeat)
        let writeTimeout = try settings(SettingKeys.eventsWriteTimeout)
        self.init(
            maxJIDsPerStream: maxJIDs, maxStreams: maxStreams,
            heartbeat: .milliseconds(Int64((heartbeat * 1000).rounded())),
            writeTimeout: .milliseconds(Int64((writeTimeout * 1000).rounded())), history: history,
            retry: .milliseconds(retry))
    }
}
