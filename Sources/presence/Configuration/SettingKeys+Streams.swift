import PresenceService
import PresenceSource

/// Change streams, readiness behind a balancer, and the resync.
extension SettingKeys {
    static let eventsMaxJIDs = SettingKey<Int>(
        "events-max-jids", "Most JIDs one change stream may watch",
        default: EventStreamConfiguration.defaultMaxJIDsPerStream, bounds: .atLeast(1))
    static let eventsMaxStreams = SettingKey<Int>(
        "events-max-streams", "Most change streams open at once", default: EventStreamConfiguration.defaultMaxStreams,
        bounds: .atLeast(1))
    static let eventsHeartbeat = SettingKey<Double>(
        "events-heartbeat", "Seconds between comment lines on an idle change stream, for proxies",
        default: EventStreamConfiguration.defaultHeartbeat.seconds, bounds: .between(0.1, 86_400, "seconds"))
    static let eventsWriteTimeout = SettingKey<Double>(
        "events-write-timeout", "Seconds a change stream's reader may stop reading before the stream is closed",
        default: EventStreamConfiguration.defaultWriteTimeout.seconds, bounds: .between(0.1, 86_400, "seconds"))
    static let eventsHistory = SettingKey<Int>(
        "events-history", "Recent changes kept for Last-Event-ID resumes",
        default: EventStreamConfiguration.defaultHistory, bounds: .atLeast(1))
    static let eventsRetry = SettingKey<Int>(
        "events-retry",
        "Shortest wait, in milliseconds, a client is told before it reconnects a broken change stream",
        default: Int(EventStreamConfiguration.defaultRetry / .milliseconds(1)),
        bounds: .between(1, 3_600_000, "milliseconds"),
        discussion: "Each stream is told a wait between this and twice this, drawn at random, so the clients of a "
            + "replica that dies come back spread out rather than all at once.")

    static let readyGrace = SettingKey<Double>(
        "ready-grace", "Seconds a replica that was live stays ready after it stops being live",
        default: ReadinessConfiguration.defaultGrace.seconds, bounds: .between(0, 86_400, "seconds"))
    static let whenNotReady = SettingKey<ReadinessConfiguration.WhenNotReady>(
        "when-not-ready",
        "What presence queries and change streams get while the replica is not ready: answer or refuse",
        default: .answer,
        discussion: "refuse answers them 503 not-ready (unless the request has the header "
            + "\(ReadinessConfiguration.acceptStaleHeader)) and ends open change streams when the replica stops "
            + "being ready, so a balancer that learns from answers, such as nginx, moves them to a ready replica.")
    static let resyncInterval = SettingKey<SecondsOrNever>(
        "resync-interval", "Seconds between asking the XMPP server again about members, or never",
        default: SecondsOrNever(seconds: ResyncConfiguration.defaultInterval.seconds),
        bounds: .between(0.1, 604_800, "seconds, or never"),
        discussion: "A server can forget a session without telling anyone (an ejabberd node that crashes): the "
            + "resync bounds how long such a status is shown, to the interval plus two passes over the members "
            + "asked at --resync-rate.")
    static let resyncRate = SettingKey<Int>(
        "resync-rate", "Most members probed per second by a resync",
        default: ResyncConfiguration.defaultMembersPerSecond, bounds: .atLeast(1))
    static let resyncMembers = SettingKey<ResyncConfiguration.Members>(
        "resync-members", "Which members a resync asks: available or all", default: ResyncConfiguration.defaultMembers,
        discussion: "available asks the members heard available and not confirmed offline since: the statuses a "
            + "server can forget silently. all asks every roster member.")
}
