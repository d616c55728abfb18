import ArgumentParser
import PresenceService
import PresenceSource

extension ReadinessConfiguration.WhenNotReady: ExpressibleByArgument {}
extension ResyncConfiguration.Members: ExpressibleByArgument {}

/// Running several `presence serve` behind a balancer: readiness, and the resync that heals what the XMPP server
/// forgot to say.
struct ReplicaOptions: ParsableArguments {
    @Option(
        name: .customLong("ready-grace"),
        help: "Seconds a replica that was live stays ready after it stops being live (default 10).")
    var readyGraceSeconds: Double = ReadinessConfiguration.defaultGrace.seconds

    @Option(
        name: .customLong("when-not-ready"),
        help: ArgumentHelp(
            "What presence queries and change streams get while the replica is not ready: answer or refuse "
                + "(default answer).",
            discussion: "refuse answers them 503 not-ready (unless the request has the header "
                + "\(ReadinessConfiguration.acceptStaleHeader)) and ends open change streams when the replica stops "
                + "being ready, so a balancer that learns from answers, such as nginx, moves them to a ready replica."))
    var whenNotReady: ReadinessConfiguration.WhenNotReady = .answer

    @Option(
        name: .customLong("resync-interval"),
        help: ArgumentHelp(
            "Seconds between asking the XMPP server again about members, or never (default "
                + "\(ResyncConfiguration.defaultInterval.components.seconds)).",
            discussion: "A server can forget a session without telling anyone (an ejabberd node that crashes): the "
                + "resync bounds how long such a status is shown, to the interval plus two passes over the members "
                + "asked at --resync-rate."))
    var resyncInterval: SecondsOrNever?

    @Option(
        name: .customLong("resync-rate"),
        help: "Most members probed per second by a resync (default \(ResyncConfiguration.defaultMembersPerSecond)).")
    var resyncRate: Int?

    @Option(
        name: .customLong("resync-members"),
        help: ArgumentHelp(
            "Which members a resync asks: available or all (default \(ResyncConfiguration.defaultMembers.rawValue)).",
            discussion: "available asks the members heard available and not confirmed offline since: the statuses a "
                + "server can forget silently. all asks every roster member."))
    var resyncMembers: ResyncConfiguration.Members?

    func validate(hasXMPPSource: Bool) throws {
        guard readyGraceSeconds.isFinite, (0 ... 86_400).contains(readyGraceSeconds) else {
            throw ValidationError("--ready-grace must be between 0 and 86400 seconds")
        }
        if let resyncRate, resyncRate < 1 { throw ValidationError("--resync-rate must be at least 1") }
        if let seconds = resyncInterval?.seconds, !(0.1 ... 604_800).contains(seconds) {
            throw ValidationError("--resync-interval must be between 0.1 and 604800 seconds, or never")
        }
        if !hasXMPPSource && (resyncInterval != nil || resyncRate != nil || resyncMembers != nil) {
            throw ValidationError("--resync-interval, --resync-rate and --resync-members need --xmpp-jid: they ask the XMPP server")
        }
    }

    var readiness: ReadinessConfiguration {
        ReadinessConfiguration(
            grace: .milliseconds(Int64((readyGraceSeconds * 1000).rounded())), whenNotReady: whenNotReady)
    }

    /// Nil when the resync is turned off (`--resync-interval never`).
    var resync: ResyncConfiguration? {
        let defaults = ResyncConfiguration.default
        let interval = resyncInterval ?? SecondsOrNever(seconds: defaults.interval.seconds)
        guard let interval = interval.duration else { return nil }
        return ResyncConfiguration(
            interval: interval, membersPerSecond: resyncRate ?? defaults.membersPerSecond,
            members: resyncMembers ?? defaults.members)
    }
}
