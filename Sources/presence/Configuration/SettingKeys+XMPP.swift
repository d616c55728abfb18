import PresenceSource
import PresenceStore
import XMPPClient

/// The XMPP server `presence serve` watches: the watcher account, how to reach it, and how it is asked.
extension SettingKeys {
    static let xmppJID = SettingKey<String?>(
        "xmpp-jid",
        "Watcher account on your XMPP server, e.g. watcher@corp.example; its roster holds the people to watch",
        default: nil)
    static let xmppPasswordFile = SettingKey<String?>(
        "xmpp-password-file", "File whose first line is the watcher's password (never given on the command line)",
        default: nil, namesSecretFile: true)
    static let xmppHost = SettingKey<String?>("xmpp-host", "Server host", default: nil, shown: "the JID's domain")
    static let xmppPort = SettingKey<Int>(
        "xmpp-port", "Server port", default: XMPPClientConfiguration.defaultPort, bounds: .between(1, 65535))
    static let xmppTLS = SettingKey<TLSPolicy?>(
        "xmpp-tls", "required, if-offered or off", default: nil, shown: "required; if-offered on a loopback address")
    static let xmppCAFile = SettingKey<String?>(
        "xmpp-ca-file", "PEM file of the certificate authorities to trust instead of the system's (for a private CA)",
        default: nil)
    static let xmppResource = SettingKey<String>("xmpp-resource", "Resource to bind", default: "presence-store")
    static let xmppKeepAlive = SettingKey<Int>(
        "xmpp-keepalive", "Seconds of server silence before a ping",
        default: Int(KeepAlive.defaultInterval.components.seconds), bounds: .atLeast(1, "second"))
    static let xmppDeadTimeout = SettingKey<Int>(
        "xmpp-dead-timeout", "Further seconds without any answer before the connection is closed as dead",
        default: Int(KeepAlive.defaultTimeout.components.seconds),
        bounds: .atLeast(1, "second"),
        discussion: "A frozen server or a silent partition is noticed --xmpp-keepalive plus --xmpp-dead-timeout "
            + "seconds after the server's last byte; what the watcher shows is then no longer live.")
    static let xmppReconnectMax = SettingKey<Int>(
        "xmpp-reconnect-max", "Longest wait between reconnection attempts, in seconds (the first wait is 1 s)",
        default: Int(ReconnectBackoff.defaultMaximum.components.seconds), bounds: .atLeast(1, "second"))
    static let xmppMaxStanzaBytes = SettingKey<ByteSize>(
        "xmpp-max-stanza-bytes", "Largest stanza accepted from the XMPP server, e.g. the roster",
        default: ByteSize(bytes: XMPPClientConfiguration.defaultMaxStanzaBytes), shown: "32MiB",
        bounds: .atLeast(4096, "bytes"))
    static let probeTimeout = SettingKey<Double>(
        "probe-timeout", "Seconds a query waits for the server's answer to a probe before answering lost",
        default: PresenceLookup.Configuration.defaultProbeTimeout.seconds, bounds: .between(0.001, 3600, "seconds"))
    static let probeRate = SettingKey<Double>(
        "probe-rate", "Most users probed per second; queries over it answer at once with rate-limited",
        default: PresenceLookup.Configuration.defaultProbesPerSecond, bounds: .atLeast(0.001, "probes per second"))
    static let xmppSettle = SettingKey<Int>(
        "xmpp-settle",
        "Milliseconds a member must stay quiet after an available presence before an answer counts as having all "
            + "their resources",
        default: Int(XMPPPresenceSource.AnswerConfiguration.defaultSettle / .milliseconds(1)),
        bounds: .between(0, 10_000, "milliseconds"),
        discussion: "The server sends one presence per resource, from as many processes on ejabberd, in no "
            + "promised order; an offline answer never waits.")
    static let xmppReaskInterval = SettingKey<Int>(
        "xmpp-reask-interval",
        "Seconds between asking again about roster members the snapshot has no certain answer for",
        default: Int(XMPPPresenceSource.AnswerConfiguration.defaultReaskInterval.components.seconds),
        bounds: .atLeast(1, "second"))
    static let xmppQuestionsInFlight = SettingKey<Int>(
        "xmpp-questions-in-flight", "Most last-activity questions about members in flight at once",
        default: XMPPPresenceSource.AnswerConfiguration.defaultQuestionsInFlight,
        bounds: .between(1, 100_000),
        discussion: "Fewer while the server answers slowly: about one second of its answers, so a server that "
            + "reads the watcher at a limited rate (a shaper) is never handed a backlog.")
    static let xmppSessionsAPI = SettingKey<String?>(
        "xmpp-sessions-api",
        "ejabberd's HTTP API, e.g. https://xmpp.corp.example:5443/api: who has a session, asked in one question",
        default: nil,
        discussion: "The watcher asks ejabberd's connected_users_vhost with its own JID and password instead of "
            + "one last-activity question per member, which with a shared roster group of everyone costs the "
            + "server a roster of everyone each; grant the watcher that one command in api_permissions. https "
            + "(verified as the XMPP stream) or a loopback address only. Prosody answers probes and needs none.")
}
