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

    @Option(name: SettingKeys.storage.flag, help: SettingKeys.storage.help)
    var storage: StorageName?

    @OptionGroup var storageOptions: StorageOptions

    @OptionGroup var diskOptions: DiskOptions

    @OptionGroup var listenerOptions: ListenerOptions

    @OptionGroup var accessOptions: AccessOptions

    @OptionGroup var httpOptions: HTTPLimitOptions

    @OptionGroup var pressureOptions: PressureOptions

    @OptionGroup var xmppOptions: XMPPOptions

    @OptionGroup var eventOptions: EventOptions

    @OptionGroup var replicaOptions: ReplicaOptions

    @Option(
        name: .customLong("config"),
        help: ArgumentHelp(
            "A YAML or JSON file of settings keyed by flag name (also \(EnvironmentLayer.configFileVariable)).",
            discussion:
                "Flags override PRESENCE_* environment variables (PRESENCE_XMPP_JID for --xmpp-jid), which override the file."
        ))
    var configFile: String?

    @Flag(
        name: .customLong("print-config"),
        help: "Print the settings in force, each with where it comes from, and exit.")
    var printConfig = false

    @OptionGroup var streamOptions: StreamOptions

    @Option(name: SettingKeys.logLevel.flag, help: SettingKeys.logLevel.help)
    var logLevel: String?

    /// The settings in force: these flags over the `PRESENCE_*` variables over the `--config` file.
    func settings(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigurationError)
        -> Settings
    {
        var flags = FlagLayer()
        flags.record(SettingKeys.storage, storage)
        flags.record(SettingKeys.logLevel, logLevel)
        let groups: [any SettingFlags] = [
            storageOptions, diskOptions, listenerOptions, accessOptions, httpOptions, pressureOptions, xmppOptions,
            eventOptions, replicaOptions, streamOptions,
        ]
        for group in groups { group.record(into: &flags) }
        let layer = try EnvironmentLayer(environment, keys: SettingKeys.serveByName)
        let file = try (configFile ?? layer.configFile).map { path throws(ConfigurationError) in
            try ConfigurationFile(path: path, keys: SettingKeys.serveByName)
        }
        return Settings(flags: flags, environment: layer, file: file)
    }

    /// The settings in force and what the service makes of them; a value or a combination the service cannot
    /// use is a usage error (exit 64) that names where it was set.
    func resolve() throws -> (settings: Settings, serve: ServeSettings) {
        do {
            let settings = try self.settings()
            return (settings, try ServeSettings(settings))
        } catch let error as ConfigurationError {
            throw ValidationError(error.description)
        }
    }

    func validate() throws {
        _ = try resolve()
    }

    func run() async throws {
        let (settings, serve) = try resolve()
        if printConfig {
            print(ConfigurationPrinter(settings: settings, keys: SettingKeys.serve).text)
            return
        }
        try await Self.run(with: serve)
    }
}

extension ServeCommand {
    /// Starts the service with `settings` and runs it until it is asked to stop.
    static func run(with settings: ServeSettings) async throws {
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        var logger = Logger(label: "presence.service")
        logger.logLevel = settings.logLevel
        for notice in settings.environmentNotices {
            // A platform's own variables are expected; anything else may be a setting meant for another tool.
            logger.log(level: notice.isPlatform ? .debug : .warning, "\(notice.line)")
        }
        let (sources, unavailable, kernel) = settings.pressure.makeSources()
        if let kernel { logger.info("kernel memory pressure", metadata: ["sources": "\(kernel.description)"]) }
        for reason in unavailable {
            logger.notice("kernel memory pressure signal unavailable", metadata: ["reason": "\(reason)"])
        }
        defer { kernel?.stop() }
        for (flag, path) in settings.sharedSecretFiles {
            logger.warning("\(flag) can be read by other users; chmod 600 it", metadata: ["file": "\(path)"])
        }
        OpenFileLimit.ensure(
            OpenFileLimit.needed(
                feedConnections: settings.listeners.maxConnections,
                httpConnections: settings.httpLimits.maxConnections),
            logger: logger)
        var configuration = ServiceConfiguration(
            feedHost: settings.listeners.feed.host, feedPort: settings.listeners.feed.port,
            httpHost: settings.listeners.http.host, httpPort: settings.listeners.http.port,
            maxConnections: settings.listeners.maxConnections, applyThreads: settings.listeners.applyThreads,
            eventLoops: settings.listeners.eventLoops,
            idleTimeout: settings.listeners.idleTimeout, stream: settings.stream.configuration,
            decoder: settings.stream.decoder, lookup: settings.xmpp.lookupConfiguration, events: settings.events,
            http: settings.httpLimits,
            access: try settings.access.access(), tls: try settings.access.tls(),
            feedSecret: try settings.access.feedSecret(),
            readiness: settings.replicas.readiness)
        configuration.secretReloading = settings.access.reloading
        let metrics = ServiceMetrics()
        let memory = try settings.storage.memoryKind?.make(
            settings.storageLimits.configuration(memoryBudget: settings.pressure.memoryBudget))
        let tier = try settings.disk.dataDirectory.map { directory in
            try DiskTierOpening.open(
                directory, memory: memory, options: settings.disk, metrics: metrics, logger: logger)
        }
        // A final flush however the service ends: everything applied before SIGTERM is on disk.
        defer { tier?.close() }
        let store: any MemoryStorage = try tier ?? memory ?? settings.storage.kind.make()
        var source: XMPPPresenceSource?
        if let client = try settings.xmpp.configuration() {
            if client.tls == .off && !client.isLoopback {
                logger.warning("TLS is off for a remote XMPP server: presence travels unencrypted")
            }
            var sourceLogger = logger
            sourceLogger[metadataKey: "source"] = "xmpp"
            source = XMPPPresenceSource(
                configuration: client, storage: store, decoder: settings.stream.decoder, backoff: settings.xmpp.backoff,
                answering: settings.xmpp.answering, resync: settings.replicas.resync,
                sessionDirectory: try settings.xmpp.sessionDirectory(for: client), logger: sourceLogger)
        }
        let server = PresenceServer(
            configuration: configuration, storage: store, pressureSources: sources, xmppSource: source,
            metrics: metrics, logger: logger)
        try await server.run()
    }
}
