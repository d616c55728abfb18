import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PresenceIngest
import PresenceStore
import ServiceLifecycle
import XMPPStream

/// Accepts feeder connections over TCP; each connection is one stanza stream (a header is optional), parsed
/// incrementally and applied to the storage stanza by stanza while the connection stays open.
///
/// A feeder that sends malformed XML, restricted XML or an oversized stanza gets a `<stream:error>` with the
/// condition and is closed; other feeders and everything already applied are untouched. With
/// ``ServiceConfiguration/tls``, feeders connect over TLS; with ``ServiceConfiguration/feedSecret``, every feeder
/// proves the secret with the XEP-0114 component handshake before anything it sends is applied
/// (``ComponentHandshake``).
///
/// A connection's task parses (``FeederConnection``, which says where); the feed's ``ApplyPool`` (one per server,
/// ``ServiceConfiguration/applyThreads`` threads, shared by all feeders) decodes and applies, each feeder's stanzas in
/// order, so one fast feeder keeps two cores busy. Reading pauses while a feeder's queue in the pool is full (NIO's
/// async channel back-pressure), so a fast feeder cannot make the service buffer without bound. The service's counters
/// count a stanza once it is applied, so `/v1/stats` never shows an update that queries cannot see yet. A feeder that
/// closes its side has its connection closed once everything it sent is applied. On graceful shutdown it stops
/// accepting and lets open streams finish what they sent.
public struct FeedServer: Service, CustomStringConvertible {
    let configuration: ServiceConfiguration
    let storage: any MemoryStorage
    let statistics: ServiceStatistics
    let logger: Logger
    let onBound: @Sendable (Int) async -> Void
    /// The feed secret and TLS context, read for each new feeder; nil: the configuration's, never replaced.
    let secrets: ServiceSecrets?
    /// The event loops that run feeder connections (the service's, shared with the query API).
    let eventLoops: any EventLoopGroup

    public init(
        configuration: ServiceConfiguration, storage: any MemoryStorage, statistics: ServiceStatistics,
        logger: Logger, secrets: ServiceSecrets? = nil,
        eventLoops: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        onBound: @escaping @Sendable (Int) async -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.eventLoops = eventLoops
        self.secrets = secrets
        self.storage = storage
        self.statistics = statistics
        self.logger = logger
        self.onBound = onBound
    }

    /// Its name in swift-service-lifecycle's logs, rather than its whole configuration.
    public var description: String { "FeedServer" }

    public func run() async throws {
        let idle = TimeAmount.nanoseconds(
            Int64(configuration.idleTimeout.components.seconds) * 1_000_000_000
                + configuration.idleTimeout.components.attoseconds / 1_000_000_000)
        let secrets =
            try self.secrets
            ?? ServiceSecrets(access: .open, feedSecret: configuration.feedSecret, tls: configuration.tls)
        let server = try await ServerBootstrap(group: eventLoops)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            // A feeder that closes its side (it sent everything) is read to the end and closed once all of it is
            // applied: its connection's close says so. Without this, NIO would close at once, with reads still
            // queued for the task.
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .bind(host: configuration.feedHost, port: configuration.feedPort) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls = secrets.tlsContext {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                    }
                    try channel.pipeline.syncOperations.addHandlers(
                        IdleStateHandler(readTimeout: idle), CloseOnIdleHandler())
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        let port = server.channel.localAddress?.port ?? configuration.feedPort
        logger.info("feed listening", metadata: ["host": "\(configuration.feedHost)", "port": "\(port)"])
        await onBound(port)
        let pool = ApplyPool(threads: configuration.applyThreads, name: "presence-feed-apply")
        let active = Locked(0)
        let maxConnections = configuration.maxConnections
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { inbound in
                    for try await connection in inbound {
                        let admitted = active.withLock { count -> Bool in
                            guard count < maxConnections else { return false }
                            count += 1
                            return true
                        }
                        guard admitted else {
                            group.addTask { await self.refuse(connection) }
                            continue
                        }
                        group.addTask {
                            defer { active.withLock { $0 -= 1 } }
                            await self.serve(connection, applyingOn: pool, feedSecret: secrets.feedSecret)
                        }
                    }
                }
            }
        } onGracefulShutdown: {
            server.channel.close(promise: nil)  // stop accepting; open streams finish
        }
        logger.info("feed stopped")
    }

    private func refuse(_ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>) async {
        logger.warning("feeder refused: too many connections", metadata: ["max": "\(configuration.maxConnections)"])
        var writer = XMPPWriter()
        writer.openStream()
        writer.streamError(
            XMPPStreamError.Condition.policyViolation.rawValue,
            text: "too many connections (at most \(configuration.maxConnections))")
        writer.closeStream()
        try? await connection.channel.writeAndFlush(ByteBuffer(bytes: writer.bytes)).get()
        try? await connection.channel.close()
    }

    /// - Parameter feedSecret: the secret this feeder must prove, as it is when the feeder connects.
    private func serve(
        _ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>, applyingOn pool: ApplyPool, feedSecret: FeedSecret?
    ) async {
        let peer = connection.channel.remoteAddress?.description ?? "unknown"
        var logger = self.logger
        logger[metadataKey: "feeder"] = "\(peer)"
        statistics.feederConnected()
        logger.info("feeder connected")
        defer {
            statistics.feederDisconnected()
        }
        let session = IngestSession(
            storage: storage, configuration: configuration.stream, decoder: configuration.decoder,
            applyingOn: pool, onBatchApplied: { [statistics] in statistics.record($0) })
        let handshake = feedSecret.map { ComponentHandshake(secret: $0.bytes) }
        if let handshake {
            session.onEvent = { handshake.handle($0) }
            session.admits = { handshake.admits($0) }
        }
        await FeederConnection(
            connection: connection, session: session, handshake: handshake, statistics: statistics, logger: logger
        ).run()
        logger.info("feeder disconnected")
    }
}

/// Closes a connection when `IdleStateHandler` says it has been silent for too long.
final class CloseOnIdleHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}
