import PresenceService

/// Where the service listens, who may use it, and the query API's limits.
extension SettingKeys {
    static let feed = SettingKey<HostAndPort>(
        "feed", "Address feeders connect to", default: HostAndPort(host: "127.0.0.1", port: 5270))
    static let http = SettingKey<HostAndPort>(
        "http", "Address of the query API", default: HostAndPort(host: "127.0.0.1", port: 8080))
    static let allowRemote = SettingKey<Bool>(
        "allow-remote", "Allow listening on addresses other than loopback", default: false)
    static let maxConnections = SettingKey<Int>(
        "max-connections", "Most feeder connections at once", default: ServiceConfiguration.defaultMaxConnections,
        bounds: .atLeast(1))
    static let feedApplyThreads = SettingKey<Int>(
        "feed-apply-threads", "Threads that decode and apply what feeders send, shared by all feeders",
        default: ServiceConfiguration.defaultApplyThreads, shown: "one per core", bounds: .between(1, 256))
    static let eventLoops = SettingKey<Int>(
        "event-loops", "Threads that run the feed port's and the query API's connections, change streams included",
        default: ServiceConfiguration.defaultEventLoops, shown: "one per core", bounds: .between(1, 256))
    static let idleTimeout = SettingKey<Int>(
        "idle-timeout", "Seconds after which a silent feeder is closed",
        default: Int(ServiceConfiguration.defaultIdleTimeout.components.seconds), bounds: .atLeast(1, "second"))

    static let apiTokenFile = SettingKey<String?>(
        "api-token-file",
        "File of bearer tokens for the query API, one per line, each optionally followed by a name for the logs",
        default: nil, namesSecretFile: true)
    static let metricsOpen = SettingKey<Bool>(
        "metrics-open", "Serve /metrics without a token even when tokens are required", default: false)
    static let feedSecretFile = SettingKey<String?>(
        "feed-secret-file",
        "File whose first line is the shared secret feeders prove with the XEP-0114 component handshake",
        default: nil, namesSecretFile: true)
    static let tlsCertificate = SettingKey<String?>(
        "tls-cert", "PEM certificate chain for TLS on both listeners", default: nil)
    static let tlsKey = SettingKey<String?>(
        "tls-key", "PEM private key of --tls-cert", default: nil, namesSecretFile: true)
    static let insecureHTTP = SettingKey<Bool>(
        "insecure-http", "Allow listeners on non-loopback addresses without TLS (presence then travels unencrypted)",
        default: false)

    static let httpMaxBatch = SettingKey<Int>(
        "http-max-batch", "Most JIDs in one GET /v1/presence?jid=...", default: HTTPLimits.defaultMaxBatchJIDs,
        bounds: .atLeast(1))
    static let httpMaxConnections = SettingKey<Int>(
        "http-max-connections",
        "Most HTTP connections at once, change streams included; one more waits to be accepted",
        default: HTTPLimits.defaultMaxConnections, bounds: .atLeast(1))
    static let httpHeaderTimeout = SettingKey<Double>(
        "http-header-timeout",
        "Seconds a client may take to send a request's headers, or to ask again on a kept connection",
        default: HTTPLimits.defaultHeaderTimeout.seconds, bounds: .between(0.1, 86_400, "seconds"))

    static let logLevel = SettingKey<String>(
        "log-level", "trace, debug, info, notice, warning, error or critical", default: "info")
}
