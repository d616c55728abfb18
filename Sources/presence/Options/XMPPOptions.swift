import ArgumentParser
import Foundation
import PresenceModel
import PresenceSource
import PresenceStore
import XMPPClient

extension TLSPolicy: ExpressibleByArgument {}

/// The flags of the XMPP server `presence serve` watches: the watcher account and how to reach it. The password
/// only ever comes from a file.
struct XMPPOptions: ParsableArguments, SettingFlags {
    @Option(name: SettingKeys.xmppJID.flag, help: SettingKeys.xmppJID.help)
    var jid: String?

    @Option(name: SettingKeys.xmppPasswordFile.flag, help: SettingKeys.xmppPasswordFile.help)
    var passwordFile: String?

    @Option(name: SettingKeys.xmppHost.flag, help: SettingKeys.xmppHost.help)
    var host: String?

    @Option(name: SettingKeys.xmppPort.flag, help: SettingKeys.xmppPort.help)
    var port: Int?

    @Option(name: SettingKeys.xmppTLS.flag, help: SettingKeys.xmppTLS.help)
    var tls: TLSPolicy?

    @Option(name: SettingKeys.xmppCAFile.flag, help: SettingKeys.xmppCAFile.help)
    var caFile: String?

    @Option(name: SettingKeys.xmppResource.flag, help: SettingKeys.xmppResource.help)
    var resource: String?

    @Option(name: SettingKeys.xmppKeepAlive.flag, help: SettingKeys.xmppKeepAlive.help)
    var keepAliveSeconds: Int?

    @Option(name: SettingKeys.xmppDeadTimeout.flag, help: SettingKeys.xmppDeadTimeout.help)
    var deadTimeoutSeconds: Int?

    @Option(name: SettingKeys.xmppReconnectMax.flag, help: SettingKeys.xmppReconnectMax.help)
    var reconnectMaxSeconds: Int?

    @Option(name: SettingKeys.xmppMaxStanzaBytes.flag, help: SettingKeys.xmppMaxStanzaBytes.help)
    var maxStanzaBytes: ByteSize?

    @Option(name: SettingKeys.probeTimeout.flag, help: SettingKeys.probeTimeout.help)
    var probeTimeoutSeconds: Double?

    @Option(name: SettingKeys.probeRate.flag, help: SettingKeys.probeRate.help)
    var probesPerSecond: Double?

    @Option(name: SettingKeys.xmppSettle.flag, help: SettingKeys.xmppSettle.help)
    var settleMilliseconds: Int?

    @Option(name: SettingKeys.xmppReaskInterval.flag, help: SettingKeys.xmppReaskInterval.help)
    var reaskIntervalSeconds: Int?

    @Option(name: SettingKeys.xmppQuestionsInFlight.flag, help: SettingKeys.xmppQuestionsInFlight.help)
    var questionsInFlight: Int?

    @Option(name: SettingKeys.xmppSessionsAPI.flag, help: SettingKeys.xmppSessionsAPI.help)
    var sessionsAPI: String?

    func record(into flags: inout FlagLayer) {
        flags.record(SettingKeys.xmppJID, jid)
        flags.record(SettingKeys.xmppPasswordFile, passwordFile)
        flags.record(SettingKeys.xmppHost, host)
        flags.record(SettingKeys.xmppPort, port)
        flags.record(SettingKeys.xmppTLS, tls)
        flags.record(SettingKeys.xmppCAFile, caFile)
        flags.record(SettingKeys.xmppResource, resource)
        flags.record(SettingKeys.xmppKeepAlive, keepAliveSeconds)
        flags.record(SettingKeys.xmppDeadTimeout, deadTimeoutSeconds)
        flags.record(SettingKeys.xmppReconnectMax, reconnectMaxSeconds)
        flags.record(SettingKeys.xmppMaxStanzaBytes, maxStanzaBytes)
        flags.record(SettingKeys.probeTimeout, probeTimeoutSeconds)
        flags.record(SettingKeys.probeRate, probesPerSecond)
        flags.record(SettingKeys.xmppSettle, settleMilliseconds)
        flags.record(SettingKeys.xmppReaskInterval, reaskIntervalSeconds)
        flags.record(SettingKeys.xmppQuestionsInFlight, questionsInFlight)
        flags.record(SettingKeys.xmppSessionsAPI, sessionsAPI)
    }
}

/// The XMPP server in force: the watcher account, how to reach it and how it is asked.
struct XMPPSettings {
    let jid: String?
    let passwordFile: String?
    let host: String?
    let port: Int
    let tls: TLSPolicy?
    let caFile: String?
    let resource: String
    let keepAliveSeconds: Int
    let deadTimeoutSeconds: Int
    let reconnectMaxSeconds: Int
    let maxStanzaBytes: ByteSize
    let probeTimeoutSeconds: Double
    let probesPerSecond: Double
    let settleMilliseconds: Int
    let reaskIntervalSeconds: Int
    let questionsInFlight: Int
    let sessionsAPI: URL?

    init(_ settings: Settings) throws {
        jid = try settings(SettingKeys.xmppJID)
        passwordFile = try settings(SettingKeys.xmppPasswordFile)
        host = try settings(SettingKeys.xmppHost)
        port = try settings(SettingKeys.xmppPort)
        tls = try settings(SettingKeys.xmppTLS)
        caFile = try settings(SettingKeys.xmppCAFile)
        resource = try settings(SettingKeys.xmppResource)
        keepAliveSeconds = try settings(SettingKeys.xmppKeepAlive)
        deadTimeoutSeconds = try settings(SettingKeys.xmppDeadTimeout)
        reconnectMaxSeconds = try settings(SettingKeys.xmppReconnectMax)
        maxStanzaBytes = try settings(SettingKeys.xmppMaxStanzaBytes)
        probeTimeoutSeconds = try settings(SettingKeys.probeTimeout)
        probesPerSecond = try settings(SettingKeys.probeRate)
        settleMilliseconds = try settings(SettingKeys.xmppSettle)
        reaskIntervalSeconds = try settings(SettingKeys.xmppReaskInterval)
        questionsInFlight = try settings(SettingKeys.xmppQuestionsInFlight)
        sessionsAPI = try Self.sessionsAPI(try settings(SettingKeys.xmppSessionsAPI))
        try validate()
    }

    /// How the source decides that the server has answered about a member.
    var answering: XMPPPresenceSource.AnswerConfiguration {
        .init(
            settle: .milliseconds(settleMilliseconds), reaskInterval: .seconds(reaskIntervalSeconds),
            questionsInFlight: questionsInFlight)
    }

    /// How queries refill lost users by probe.
    var lookupConfiguration: PresenceLookup.Configuration {
        PresenceLookup.Configuration(
            probeTimeout: .milliseconds(Int64((probeTimeoutSeconds * 1000).rounded())),
            probesPerSecond: probesPerSecond)
    }

    private func validate() throws {
        guard let jid else {
            if passwordFile != nil || host != nil || caFile != nil || sessionsAPI != nil {
                throw ValidationError("the --xmpp-* options need --xmpp-jid")
            }
            return
        }
        let account: BareJID
        do { account = try BareJID(jid) } catch {
            throw ValidationError("--xmpp-jid '\(jid)' is not a bare JID: \(error)")
        }
        guard account.localpart != nil else { throw ValidationError("--xmpp-jid needs a user part: user@domain") }
        guard passwordFile != nil else { throw ValidationError("--xmpp-jid needs --xmpp-password-file") }
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw ValidationError("--xmpp-ca-file \(caFile) cannot be read")
        }
    }

    /// The sessions API's address, checked: `https`, or `http` to a loopback address only (the watcher's password
    /// goes with every question).
    private static func sessionsAPI(_ text: String?) throws -> URL? {
        guard let text else { return nil }
        let flag = "--\(SettingKeys.xmppSessionsAPI.name)"
        guard let url = URL(string: text), let scheme = url.scheme, let host = url.host, !host.isEmpty else {
            throw ValidationError("\(flag) '\(text)' is not a URL such as https://xmpp.corp.example:5443/api")
        }
        // A URL is logged and shown: the API is asked with the watcher's own password, never one written in it.
        guard url.user == nil, url.password == nil else {
            throw ValidationError("\(flag): no user or password in the URL; the watcher's own account is used")
        }
        switch scheme {
        case "https": return url
        case "http" where TLSPolicy.isLoopback(host): return url
        case "http":
            throw ValidationError(
                "\(flag) \(text): the watcher's password would cross the network unencrypted; use https")
        default: throw ValidationError("\(flag) '\(text)': http or https only")
        }
    }

    /// The session directory of the server, asked as the watcher; nil when no sessions API is given.
    func sessionDirectory(for client: XMPPClientConfiguration) throws -> (any SessionDirectory)? {
        try sessionsAPI.map { endpoint in
            try EjabberdSessionDirectory(endpoint: endpoint, client: client, maximumAnswerBytes: maxStanzaBytes.bytes)
        }
    }

    /// The client configuration, with the password read from its file; nil when no XMPP server is asked for.
    func configuration() throws -> XMPPClientConfiguration? {
        guard let jid, let passwordFile else { return nil }
        let password = try SecretFile(path: passwordFile, option: "--xmpp-password-file").firstLine()
        return XMPPClientConfiguration(
            account: try BareJID(jid), password: password, resource: resource, host: host, port: port, tls: tls,
            trustedCertificatesFile: caFile,
            keepAlive: KeepAlive(interval: .seconds(keepAliveSeconds), timeout: .seconds(deadTimeoutSeconds)),
            streamLimits: XMPPClientConfiguration.streamLimits(maxStanzaBytes: maxStanzaBytes.bytes))
    }

    var backoff: ReconnectBackoff {
        ReconnectBackoff(maximum: .seconds(reconnectMaxSeconds))
    }
}
