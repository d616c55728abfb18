import ArgumentParser
import PresenceService

/// The flags of the service's two listeners: where feeders and the query API are reached, and the feed's limits.
struct ListenerOptions: ParsableArguments, SettingFlags {
    @Option(name: SettingKeys.feed.flag, help: SettingKeys.feed.help)
    var feed: HostAndPort?

    @Option(name: SettingKeys.http.flag, help: SettingKeys.http.help)
    var http: HostAndPort?

    @Flag(name: SettingKeys.allowRemote.flag, inversion: .prefixedNo, help: SettingKeys.allowRemote.help)
    var allowRemote: Bool?

    @Option(name: SettingKeys.maxConnections.flag, help: SettingKeys.maxConnections.help)
    var maxConnections: Int?

    @Option(name: SettingKeys.feedApplyThreads.flag, help: SettingKeys.feedApplyThreads.help)
    var feedApplyThreads: Int?

    @Option(name: SettingKeys.eventLoops.flag, help: SettingKeys.eventLoops.help)
    var eventLoops: Int?

    @Option(name: SettingKeys.idleTimeout.flag, help: SettingKeys.idleTimeout.help)
    var idleTimeout: Int?

    func record(into flags: inout FlagLayer) {
        flags.record(SettingKeys.feed, feed)
        flags.record(SettingKeys.http, http)
        flags.record(SettingKeys.allowRemote, allowRemote)
        flags.record(SettingKeys.maxConnections, maxConnections)
        flags.record(SettingKeys.feedApplyThreads, feedApplyThreads)
        flags.record(SettingKeys.eventLoops, eventLoops)
        flags.record(SettingKeys.idleTimeout, idleTimeout)
    }
}

/// The listeners in force.
struct ListenerSettings {
    let feed: HostAndPort
    let http: HostAndPort
    let maxConnections: Int
    let applyThreads: Int
    let eventLoops: Int
    let idleTimeout: Duration

    init(_ settings: Settings) throws {
        feed = try settings(SettingKeys.feed)
        http = try settings(SettingKeys.http)
        maxConnections = try settings(SettingKeys.maxConnections)
        applyThreads = try settings(SettingKeys.feedApplyThreads)
        eventLoops = try settings(SettingKeys.eventLoops)
        let idleSeconds = try settings(SettingKeys.idleTimeout)
        if try !settings(SettingKeys.allowRemote) {
            for address in [feed, http] where !ServiceConfiguration.isLoopback(address.host) {
                throw ValidationError("\(address.host) is not a loopback address; pass --allow-remote to listen on it")
            }
        }
        idleTimeout = .seconds(idleSeconds)
    }
}
