import ArgumentParser
import Foundation
import Logging
import PresenceService
import PresenceSource
import PresenceStore

/// `presence serve`: the running service.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Watch an XMPP server and consume stanza streams over TCP; answer presence queries over HTTP.",
        discussion: """
            With --xmpp-jid, the service logs in to your XMPP server as a watcher account whose roster holds the \
            people to watch (a shared roster group), keeps every member's status, marks members without an \
            available resource offline, and reconnects forever with backoff. Each feeder connection is one stanza stream (a <stream:stream> header is optional); a stanza is applied \
            as soon as its last byte arrives. A feeder that sends malformed or restricted XML or an oversized \
            stanza gets a <stream:error> and is closed. HTTP: GET /v1/presence/{jid}, GET /v1/presence?jid=a&jid=b, \
            GET /v1/stats, GET /metrics, GET /healthz, GET /readyz. Several replicas can watch one account, each \
            with its own --xmpp-resource, behind a balancer (Samples/deploy/nginx-replicas.conf). SIGTERM or SIGINT stop accepting, finish the stanzas in \
            hand and exit 0.
            """)

    @Option(name: .customLong("storage"), help: "\(StorageName.choices).")
    var storage: StorageName = .default

    @OptionGroup var storageOptions: StorageOptions

    @OptionGroup var diskOptions: DiskOptions

    @Option(name: .customLong("feed"), help: "Address feeders connect to (default 127.0.0.1:5270).")
    var feed: HostAndPort = HostAndPort(host: "127.0.0.1", port: 5270)

    @Option(name: .customLong("http"), help: "Address of the query API (default 127.0.0.1:8080).")
    var http: HostAndPort = HostAndPort(host: "127.0.0.1", port: 8080)

    @Flag(name: .customLong("allow-remote"), help: "Allow listening on addresses other than loopback.")
    var allowRemote = false

    @Option(name: .customLong("max-connections"), help: "Most feeder connections at once (default 1024).")
    var maxConnections: Int = ServiceConfiguration.defaultMaxConnections

    @Option(
        name: .customLong("feed-apply-threads"),
        help: "Threads that decode and apply what feeders send, shared by all feeders (default: one per core).")
    var feedApplyThreads: Int = ServiceConfiguration.defaultApplyThreads

    @Option(name: .customLong("idle-timeout"), help: "Seconds after which a silent feeder is closed (default 300).")
    var idleTimeout: Int = 300

    @OptionGroup var accessOptions: AccessOptions

    @OptionGroup var httpOptions: HTTPLimitOptions

    @OptionGroup var pressureOptions: PressureOptions

    @OptionGroup var xmppOptions: XMPPOptions

    @OptionGroup var eventOptions: EventOptions

    @OptionGroup var replicaOptions: ReplicaOptions

    @Option(
        name: .customLong("config"),
        help: ArgumentHelp(
            "A YAML or JSON file of settings keyed by flag name (also PRESENCE_CONFIG).",
            discussion: "Flags override PRESENCE_* environment variables (PRESENCE_XMPP_JID for --xmpp-jid), which override the file."
        ))
    var configFile: String?

    @Flag(
        name: .customLong("print-config"),
        help: "Print the settings in force, each with where it comes from, and exit.")
    var printConfig = false

    @OptionGroup var streamOptions: StreamOptions

    @Option(
        name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical (default info).")
    var logLevel: String = "info"

    func validate() throws {
        if !allowRemote {
            for address in [feed, http] where !ServiceConfiguration.isLoopback(address.host) {
                throw ValidationError("\(address.host) is not a loopback address; pass --allow-remote to listen on it")
            }
        }
        try accessOptions.validate(http: http, feed: feed)
        if maxConnections < 1 { throw ValidationError("--max-connections must be at least 1") }
        if !(1 ... 256).contains(feedApplyThreads) {
            throw ValidationError("--feed-apply-threads must be between 1 and 256")
        }
        if idleTimeout < 1 { throw ValidationError("--idle-timeout must be at least 1 second") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level \(logLevel)") }
        try replicaOptions.validate(hasXMPPSource: xmppOptions.jid != nil)
        if storage.hasDiskTier && diskOptions.dataDirectory == nil {
            throw ValidationError("--storage \(storage) keeps its disk tier in --data-dir: give one")
        }
    }

    func run() async throws {
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        var logger = Logger(label: "presence.service")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        let (sources, unavailable, kernel) = pressureOptions.makeSources()
        if let kernel { logger.info("kernel memory pressure", metadata: ["sources": "\(kernel.description)"]) }
        for reason in unavailable {
            logger.notice("kernel memory pressure signal unavailable", metadata: ["reason": "\(reason)"])
        }
        defer { kernel?.stop() }
        accessOptions.warnAboutSharedFiles(logger)
        var configuration = ServiceConfiguration(
            feedHost: feed.host, feedPort: feed.port, httpHost: http.host, httpPort: http.port,
            maxConnections: maxConnections, applyThreads: feedApplyThreads,
            idleTimeout: .seconds(idleTimeout), stream: streamOptions.configuration, decoder: streamOptions.decoder,
            lookup: xmppOptions.lookupConfiguration, events: eventOptions.configuration, http: httpOptions.limits,
            access: try accessOptions.access(), tls: try accessOptions.tls(), feedSecret: try accessOptions.feedSecret(),
            readiness: replicaOptions.readiness)
        configuration.secretReloading = accessOptions.reloading
        let metrics = ServiceMetrics()
        let memory = try storage.memoryKind?.make(
            storageOptions.configuration(memoryBudget: pressureOptions.memoryBudget?.bytes))
        let tier = try diskOptions.dataDirectory.map { directory in
            try DiskTierOpening.open(
                directory, memory: memory, options: diskOptions, metrics: metrics, logger: logger)
        }
        // A final flush however the service ends: everything applied before SIGTERM is on disk.
        defer { tier?.close() }
        let store: any MemoryStorage = try tier ?? memory ?? storage.kind.make()
        var source: XMPPPresenceSource?
        if let client = try xmppOptions.configuration() {
            if xmppOptions.passwordFileIsShared() {
                logger.warning(
                    "the XMPP password file can be read by other users; chmod 600 it",
                    metadata: ["file": "\(xmppOptions.passwordFile ?? "")"])
            }
            if client.tls == .off && !client.isLoopback {
                logger.warning("TLS is off for a remote XMPP server: presence travels unencrypted")
            }
            var sourceLogger = logger
            sourceLogger[metadataKey: "source"] = "xmpp"
            source = XMPPPresenceSource(
                configuration: client, storage: store, decoder: streamOptions.decoder, backoff: xmppOptions.backoff,
                answering: xmppOptions.answering, resync: replicaOptions.resync, logger: sourceLogger)
        }
        let server = PresenceServer(
            configuration: configuration, storage: store, pressureSources: sources, xmppSource: source,
            metrics: metrics, logger: logger)
        try await server.run()
    }
}
