import ArgumentParser
import PresenceService
import PresenceSource

extension ReadinessConfiguration.WhenNotReady: ExpressibleByArgument {}
extension ResyncConfiguration.Members: ExpressibleByArgument {}

/// The flags of running several `presence serve` behind a balancer: readiness, and the resync that heals what the
/// XMPP server forgot to say.
struct ReplicaOptions: ParsableArguments, SettingFlags {
    @Option(name: SettingKeys.readyGrace.flag, help: SettingKeys.readyGrace.help)
    var readyGraceSeconds: Double?

    @Option(name: SettingKeys.whenNotReady.flag, help: SettingKeys.whenNotReady.help)
    var whenNotReady: ReadinessConfiguration.WhenNotReady?

    @Option(name: SettingKeys.resyncInterval.flag, help: SettingKeys.resyncInterval.help)
    var resyncInterval: SecondsOrNever?

    @Option(name: SettingKeys.resyncRate.flag, help: SettingKeys.resyncRate.help)
    var resyncRate: Int?

    @Option(name: SettingKeys.resyncMembers.flag, help: SettingKeys.resyncMembers.help)
    var resyncMembers: ResyncConfiguration.Members?

    func record(into flags: inout FlagLayer) {
        flags.record(SettingKeys.readyGrace, readyGraceSeconds)
        flags.record(SettingKeys.whenNotReady, whenNotReady)
        flags.record(SettingKeys.resyncInterval, resyncInterval)
        flags.record(SettingKeys.resyncRate, resyncRate)
        flags.record(SettingKeys.resyncMembers, resyncMembers)
    }
}

/// Readiness and resync in force.
struct ReplicaSettings {
    let readiness: ReadinessConfiguration
    /// Nil when the resync is turned off (`--resync-interval never`).
    let resync: ResyncConfiguration?

    init(_ settings: Settings, hasXMPPSource: Bool) throws {
        let grace = try settings(SettingKeys.readyGrace)
        let interval = try settings(SettingKeys.resyncInterval)
        let rate = try settings(SettingKeys.resyncRate)
        let resyncKeysSet =
            settings.isSet(SettingKeys.resyncInterval) || settings.isSet(SettingKeys.resyncRate)
            || settings.isSet(SettingKeys.resyncMembers)
        if !hasXMPPSource && resyncKeysSet {
            throw ValidationError(
                "--resync-interval, --resync-rate and --resync-members need --xmpp-jid: they ask the XMPP server")
        }
        readiness = ReadinessConfiguration(
            grace: .milliseconds(Int64((grace * 1000).rounded())), whenNotReady: try settings(SettingKeys.whenNotReady))
        resync = try interval.duration.map { duration in
            ResyncConfiguration(
                interval: duration, membersPerSecond: rate, members: try settings(SettingKeys.resyncMembers))
        }
    }
}
