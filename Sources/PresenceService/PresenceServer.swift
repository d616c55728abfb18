import Hummingbird
import HummingbirdCore
import Logging
import PresencePressure
import PresenceSource
import PresenceStore
import ServiceLifecycle
import UnixSignals

/// PresenceStore as a running service: feeders push stanza streams over TCP, apps and dashboards query over
/// HTTP, real memory pressure drives the storage. Built on swift-service-lifecycle: SIGTERM or SIGINT stop
/// accepting feeders, let open streams finish what they sent, and end the process cleanly.
public struct PresenceServer: Sendable {
    public let configuration: ServiceConfiguration
    public let storage: any MemoryStorage
    public let statistics: ServiceStatistics
    public let metrics: ServiceMetrics
    public let pressureSources: [any MemoryPressureSource]
    /// The XMPP server the service watches, beside its feed port; nil when it only has the feed port.
    public let xmppSource: XMPPPresenceSource?
    /// How queries read the storage, refilling by probe from ``xmppSource`` when there is one.
    public let lookup: PresenceLookup
    /// The change streams' fan-out.
    public let changes: ChangeHub
    /// Whether this replica is ready to take traffic (`GET /readyz`).
    public let readiness: ReadinessMonitor
    public let logger: Logger

    public init(
        configuration: ServiceConfiguration, storage: any MemoryStorage,
        pressureSources: [any MemoryPressureSource] = [], xmppSource: XMPPPresenceSource? = nil,
        metrics: ServiceMetrics = ServiceMetrics(), logger: Logger = Logger(label: "presence.service")
    ) {
        self.configuration = configuration
        self.storage = storage
        self.statistics = ServiceStatistics()
        self.metrics = metrics
        self.pressureSources = pressureSources
        self.xmppSource = xmppSource
        self.logger = logger
        lookup = PresenceLookup(
            storage: storage, prober: xmppSource, configuration: configuration.lookup,
            onProbeAnswered: { [metrics] in metrics.recordProbeAnswered(after: $0) })
        changes = ChangeHub(storage: storage, configuration: configuration.events, logger: logger)
        // Answers that change with no change of status: a partial member confirmed, a restored status current.
        xmppSource?.setConfirmationObserver { [weak changes] in changes?.republish($0) }
        storage.setRestoredObserver { [weak changes] in changes?.republish($0) }
        readiness = ReadinessMonitor(configuration: configuration.readiness, source: xmppSource)
    }

    /// The ports actually bound (useful when the configuration asks for port 0).
    public struct BoundPorts: Sendable {
        public var feed: Int
        public var http: Int
    }

    /// Runs until a graceful shutdown (a signal, or ``ServiceGroup/triggerGracefulShutdown()`` on the group
    /// passed to `onStarted`) has finished.
    public func run(
        signals: [UnixSignal] = [.sigterm, .sigint],
        onStarted: @escaping @Sendable (BoundPorts, ServiceGroup) async -> Void = { _, _ in }
    ) async throws {
        let (feedPorts, feedContinuation) = AsyncStream.makeStream(of: Int.self)
        let (httpPorts, httpContinuation) = AsyncStream.makeStream(of: Int.self)
        let (lookup, source) = (lookup, xmppSource)
        let systemd = SystemdNotifier()
        let secrets = try ServiceSecrets(
            access: configuration.access, feedSecret: configuration.feedSecret, tls: configuration.tls)
        // The loops of the feed port's and the query API's connections, kept for the process's life.
        let eventLoops = ServiceEventLoops.group(threads: configuration.eventLoops)
        let frontDoor = FrontDoor(
            admission: RequestAdmission(secrets: secrets, readiness: readiness),
            queries: QueryEndpoint(
                lookup: lookup, live: { source?.isLive }, maxBatchJIDs: configuration.http.maxBatchJIDs),
            events: EventStreamEndpoint(hub: changes, lookup: lookup, live: { source?.isLive }))
        let application = Application(
            responder: FrontDoorResponder(
                frontDoor: frontDoor, statistics: statistics, metrics: metrics, source: xmppSource),
            // HTTP/1.1 with storage hits answered on the event loop, inside TLS when the configuration has it.
            server: .presenceHTTP1(
                frontDoor: frontDoor, limits: configuration.http, serverName: "presence", metrics: metrics),
            configuration: .init(
                address: .hostname(configuration.httpHost, port: configuration.httpPort), serverName: "presence",
                // Over the limit, Hummingbird stops accepting until a connection closes: new clients wait in the
                // kernel's backlog instead of being turned away during a burst.
                availableConnectionsDelegate: .maximum(configuration.http.maxConnections, logger: logger)),
            onServerRunning: { channel in httpContinuation.yield(channel.localAddress?.port ?? 0) },
            eventLoopGroupProvider: .shared(eventLoops),
            logger: logger)
        let feed = FeedServer(
            configuration: configuration, storage: storage, statistics: statistics, logger: logger, secrets: secrets,
            eventLoops: eventLoops, onBound: { feedContinuation.yield($0) })
        let pressure = PressureMonitor(
            sources: pressureSources, storage: storage, statistics: statistics,
            interval: configuration.pressureInterval, logger: logger)
        // Shut down in reverse order: pressure first, then feeders drain, and the API answers until the end.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: application),
            .init(service: feed),
            .init(service: pressure, successTerminationBehavior: .ignore),
            // Shut down before the API: ending the streams lets their responses complete.
            .init(service: ChangeHubService(hub: changes)),
            .init(service: ReadinessMonitorService(monitor: readiness, hub: changes, logger: logger, systemd: systemd)),
        ]
        services.append(
            .init(
                service: SecretReloadService(
                    secrets: secrets, reloading: configuration.secretReloading, metrics: metrics, logger: logger)))
        if let xmppSource {
            // Shut down first of those above: the source stops, then the others in reverse order.
            services.append(.init(service: XMPPSourceService(source: xmppSource)))
        }
        if let systemd {
            // Last in the list is first in shutdown: systemd hears STOPPING=1 as soon as the shutdown begins.
            services.append(.init(service: SystemdStoppingService(systemd: systemd)))
        }
        var groupConfiguration = ServiceGroupConfiguration(
            services: services,
            gracefulShutdownSignals: signals, logger: logger)
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(30)
        let group = ServiceGroup(configuration: groupConfiguration)
        let ended: Result<Void, any Error>
        do {
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask {
                    // However the group ends (a port already in use, say), let the task waiting for ports finish too.
                    defer {
                        feedContinuation.finish()
                        httpContinuation.finish()
                    }
                    try await group.run()
                }
                tasks.addTask {
                    var feedIterator = feedPorts.makeAsyncIterator()
                    var httpIterator = httpPorts.makeAsyncIterator()
                    guard let feedPort = await feedIterator.next(), let httpPort = await httpIterator.next() else {
                        return
                    }
                    logger.info(
                        "presence service running",
                        metadata: [
                            "feed": "\(configuration.feedHost):\(feedPort)",
                            "http": "\(configuration.httpHost):\(httpPort)",
                            "storage": "\(storage.name)", "instance": "\(changes.instance)",
                            "version": "\(PresenceVersion.current)",
                            "xmpp":
                                "\(xmppSource.map { "\($0.configuration.account) at \($0.status.server)" } ?? "none")",
                        ])
                    systemd?.notify(
                        "READY=1\nSTATUS=\(readiness.current.statusLine) (feed \(configuration.feedHost):\(feedPort), http "
                            + "\(configuration.httpHost):\(httpPort))")
                    await onStarted(BoundPorts(feed: feedPort, http: httpPort), group)
                }
                try await tasks.waitForAll()
            }
            ended = .success(())
        } catch {
            ended = .failure(error)
        }
        try ended.get()
    }
}
