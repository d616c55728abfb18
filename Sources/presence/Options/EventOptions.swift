import ArgumentParser
import PresenceService

/// The change streams' limits (`GET /v1/presence/events`).
struct EventOptions: ParsableArguments {
    @Option(name: .customLong("events-max-jids"), help: "Most JIDs one change stream may watch (default 10000).")
    var maxJIDs: Int = EventStreamConfiguration.defaultMaxJIDsPerStream

    @Option(name: .customLong("events-max-streams"), help: "Most change streams open at once (default 10000).")
    var maxStreams: Int = EventStreamConfiguration.defaultMaxStreams

    @Option(
        name: .customLong("events-heartbeat"),
        help: "Seconds between comment lines on an idle change stream, for proxies (default 15).")
    var heartbeatSeconds: Double = EventStreamConfiguration.defaultHeartbeat.seconds

    @Option(
        name: .customLong("events-write-timeout"),
        help: "Seconds a change stream's reader may stop reading before the stream is closed (default 30).")
    var writeTimeoutSeconds: Double = EventStreamConfiguration.defaultWriteTimeout.seconds

    @Option(
        name: .customLong("events-history"),
        help: "Recent changes kept for Last-Event-ID resumes (default 65536).")
    var history: Int = EventStreamConfiguration.defaultHistory

    @Option(
        name: .customLong("events-retry"),
        help: ArgumentHelp(
            "Shortest wait, in milliseconds, a client is told before it reconnects a broken change stream (default 1000).",
            discussion: "Each stream is told a wait between this and twice this, drawn at random, so the clients of a "
                + "replica that dies come back spread out rather than all at once."))
    var retryMilliseconds: Int = Int(EventStreamConfiguration.defaultRetry / .milliseconds(1))

    func validate() throws {
        guard (1 ... 3_600_000).contains(retryMilliseconds) else {
            throw ValidationError("--events-retry must be between 1 and 3600000 milliseconds")
        }
        guard maxJIDs >= 1, maxStreams >= 1, history >= 1 else {
            throw ValidationError("--events-max-jids, --events-max-streams and --events-history must be at least 1")
        }
        for (name, value) in [
            ("--events-heartbeat", heartbeatSeconds), ("--events-write-timeout", writeTimeoutSeconds),
        ]
        where !(value.isFinite && value >= 0.1 && value <= 86_400) {
            throw ValidationError("\(name) must be between 0.1 and 86400 seconds")
        }
    }

    var configuration: EventStreamConfiguration {
        EventStreamConfiguration(
            maxJIDsPerStream: maxJIDs, maxStreams: maxStreams,
            heartbeat: .milliseconds(Int64((heartbeatSeconds * 1000).rounded())),
            writeTimeout: .milliseconds(Int64((writeTimeoutSeconds * 1000).rounded())), history: history,
            retry: .milliseconds(retryMilliseconds))
    }
}
