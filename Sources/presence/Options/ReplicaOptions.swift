import ArgumentParser
import PresenceService
import PresenceSource

extension ReadinessConfiguration.WhenNotReady: ExpressibleByArgument {}

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
        help: "Seconds between asking the XMPP server again about every member (default: never).")
    var resyncIntervalSeconds: Double?

    @Option(
        name: .customLong("resync-rate"),
        help: "Most members probed per second by a resync (default \(ResyncConfiguration.defaultMembersPerSecond)).")
    var resyncRate: Int = ResyncConfiguration.defaultMembersPerSecond

    func validate(hasXMPPSource: Bool) throws {
        guard readyGraceSeconds.isFinite, (0 ... 86_400).contains(readyGraceSeconds) else {
            throw ValidationError("--ready-grace must be between 0 and 86400 seconds")
        }
        guard resyncRate >= 1 else { throw ValidationError("--resync-rate must be at least 1") }
        if let resyncIntervalSeconds {
            guard resyncIntervalSeconds.isFinite, (0.1 ... 604_800).contains(resyncIntervalSeconds) else {
                throw ValidationError("--resync-interval must be between 0.1 and 604800 seconds")
            }
            guard hasXMPPSource else { throw ValidationError("--resync-interval needs --xmpp-jid: it asks the XMPP server") }
        }
    }

    var readiness: ReadinessConfiguration {
        ReadinessConfiguration(
            grace: .milliseconds(Int64((readyGraceSeconds * 1000).rounded())), whenNotReady: whenNotReady)
    }

    var resync: ResyncConfiguration? {
        resyncIntervalSeconds.map {
            ResyncConfiguration(interval: .milliseconds(Int64(($0 * 1000).rounded())), membersPerSecond: resyncRate)
        }
    }
}
