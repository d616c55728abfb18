import ArgumentParser
import Foundation
import PresenceModel
import PresenceSource
import PresenceStore
import XMPPClient

extension TLSPolicy: ExpressibleByArgument {}

/// The XMPP server `presence serve` watches: the watcher account and how to reach it. The password only ever
/// comes from a file.
struct XMPPOptions: ParsableArguments {
    @Option(
        name: .customLong("xmpp-jid"),
        help: "Watcher account on your XMPP server, e.g. watcher@corp.example; its roster holds the people to watch.")
    var jid: String?

    @Option(
        name: .customLong("xmpp-password-file"),
        help: "File whose first line is the watcher's password (never given on the command line).")
    var passwordFile: String?

    @Option(name: .customLong("xmpp-host"), help: "Server host (default: the JID's domain).")
    var host: String?

    @Option(name: .customLong("xmpp-port"), help: "Server port (default 5222).")
    var port: Int = XMPPClientConfiguration.defaultPort

    @Option(
        name: .customLong("xmpp-tls"),
        help: "required, if-offered or off (default required; if-offered on a loopback address).")
    var tls: TLSPolicy?

    @Option(
        name: .customLong("xmpp-ca-file"),
        help: "PEM file of the certificate authorities to trust instead of the system's (for a private CA).")
    var caFile: String?

    @Option(name: .customLong("xmpp-resource"), help: "Resource to bind (default presence-store).")
    var resource: String = "presence-store"

    @Option(
        name: .customLong("xmpp-keepalive"),
        help: "Seconds of server silence before a ping (default \(KeepAlive.defaultInterval.components.seconds)).")
    var keepAliveSeconds: Int = Int(KeepAlive.defaultInterval.components.seconds)

    @Option(
        name: .customLong("xmpp-dead-timeout"),
        help: ArgumentHelp(
            "Further seconds without any answer before the connection is closed as dead (default "
                + "\(KeepAlive.defaultTimeout.components.seconds)).",
            discussion: "A frozen server or a silent partition is noticed --xmpp-keepalive plus --xmpp-dead-timeout "
                + "seconds after the server's last byte; what the watcher shows is then no longer live."))
    var deadTimeoutSeconds: Int = Int(KeepAlive.defaultTimeout.components.seconds)

    @Option(
        name: .customLong("xmpp-reconnect-max"),
        help: "Longest wait between reconnection attempts, in seconds (default 60; the first wait is 1 s).")
    var reconnectMaxSeconds: Int = Int(ReconnectBackoff.defaultMaximum.components.seconds)

    @Option(
        name: .customLong("xmpp-max-stanza-bytes"),
        help: "Largest stanza accepted from the XMPP server, e.g. the roster (default 32MiB).")
    var maxStanzaBytes: ByteSize = ByteSize(bytes: XMPPClientConfiguration.defaultMaxStanzaBytes)

    @Option(
        name: .customLong("probe-timeout"),
        help: "Seconds a query waits for the server's answer to a probe before answering lost (default 2).")
    var probeTimeoutSeconds: Double = PresenceLookup.Configuration.defaultProbeTimeout.seconds

    @Option(
        name: .customLong("probe-rate"),
        help: "Most users probed per second; queries over it answer at once with rate-limited (default 200).")
    var probesPerSecond: Double = PresenceLookup.Configuration.defaultProbesPerSecond

    @Option(
        name: .customLong("xmpp-settle"),
        help: ArgumentHelp(
            "Milliseconds a member must stay quiet after an available presence before an answer counts as having all "
                + "their resources (default 10).",
            discussion: "The server sends one presence per resource, from as many processes on ejabberd, in no "
                + "promised order; an offline answer never waits."))
    var settleMilliseconds: Int = Int(XMPPPresenceSource.AnswerConfiguration.defaultSettle / .milliseconds(1))

    @Option(
        name: .customLong("xmpp-reask-interval"),
        help: "Seconds between asking again about roster members the snapshot has no certain answer for (default 10).")
    var reaskIntervalSeconds: Int = Int(XMPPPresenceSource.AnswerConfiguration.defaultReaskInterval.components.seconds)

    @Option(
        name: .customLong("xmpp-questions-in-flight"),
        help: ArgumentHelp(
            "Most last-activity questions about members in flight at once (default 256).",
            discussion: "Fewer while the server answers slowly: about one second of its answers, so a server that "
                + "reads the watcher at a limited rate (a shaper) is never handed a backlog."))
    var questionsInFlight: Int = XMPPPresenceSource.AnswerConfiguration.defaultQuestionsInFlight

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

    func validate() throws {
        guard probeTimeoutSeconds.isFinite, probeTimeoutSeconds >= 0.001, probeTimeoutSeconds <= 3600 else {
            throw ValidationError("--probe-timeout must be between 0.001 and 3600 seconds")
        }
        guard (0 ... 10_000).contains(settleMilliseconds) else {
            throw ValidationError("--xmpp-settle must be between 0 and 10000 milliseconds")
        }
        guard reaskIntervalSeconds >= 1 else { throw ValidationError("--xmpp-reask-interval must be at least 1") }
        guard (1 ... 100_000).contains(questionsInFlight) else {
            throw ValidationError("--xmpp-questions-in-flight must be between 1 and 100000")
        }
        guard probesPerSecond.isFinite, probesPerSecond > 0 else {
            throw ValidationError("--probe-rate must be a positive number of probes per second")
        }
        guard let jid else {
            if passwordFile != nil || host != nil || caFile != nil {
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
        guard (1 ... 65535).contains(port) else { throw ValidationError("--xmpp-port must be 1...65535") }
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw ValidationError("--xmpp-ca-file \(caFile) cannot be read")
        }
        guard maxStanzaBytes.bytes >= 4096 else {
            throw ValidationError("--xmpp-max-stanza-bytes must be at least 4KiB")
        }
        guard keepAliveSeconds >= 1, deadTimeoutSeconds >= 1, reconnectMaxSeconds >= 1 else {
            throw ValidationError("--xmpp-keepalive, --xmpp-dead-timeout and --xmpp-reconnect-max must be at least 1")
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

    /// Whether the password file can be read by others than its owner (worth a warning, as ssh gives).
    func passwordFileIsShared() -> Bool {
        passwordFile.map { SecretFile(path: $0, option: "--xmpp-password-file").isShared } ?? false
    }
}
