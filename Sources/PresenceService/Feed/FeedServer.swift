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
/// Each connection is read on its event loop by a ``FeedConnectionHandler``, which parses; the feed's
/// ``ApplyPool`` (one per server, ``ServiceConfiguration/applyThreads`` threads, shared by all feeders) decodes
/// and applies, each feeder's stanzas in order, so one fast feeder keeps two cores busy. A read of a few stanzas,
/// what a live feeder sends at a time, is applied on the event loop itself when nothing of its feeder's waits in
/// the pool: handing it over would cost more than applying it. Reading pauses while a feeder's queue in the pool
/// is full, so a fast feeder cannot make the service buffer without bound. The service's counters count a stanza
/// once it is applied, so `/v1/stats` never shows an update that queries cannot see yet. On graceful shutdown it
/// stops accepting and lets open streams finish what they sent.
public struct FeedServer: Service, CustomStringConvertible {
    let configuration: ServiceConfiguration
    let storage: any MemoryStorage
    let statistics: ServiceStatistics
    let logger: Logger
    let onBound: @Sendable (Int) async -> Void
    /// The feed secret and TLS context, read for each new feeder; nil: the configuration's, never replaced.
    let secrets: ServiceSecrets?

    public init(
        configuration: ServiceConfiguration, storage: any MemoryStorage, statistics: ServiceStatistics,
        logger: Logger, secrets: ServiceSecrets? = nil, onBound: @escaping @Sendable (Int) async -> Void = { _ in }
    ) {
        self.configuration = configuration
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
        let pool = ApplyPool(threads: configuration.applyThreads, name: "presence-feed-apply")
        let active = Locked(0)
        let maxConnections = configuration.maxConnections
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .bind(host: configuration.feedHost, port: configuration.feedPort) { channel in
                channel.eventLoop.makeCompletedFuture { () -> Feeder in
                    if let tls = secrets.tlsContext {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                    }
                    try channel.pipeline.syncOperations.addHandlers(
                        IdleStateHandler(readTimeout: idle), CloseOnIdleHandler())
                    let admitted = active.withLock { count -> Bool in
                        guard count < maxConnections else { return false }
                        count += 1
                        return true
                    }
                    guard admitted else { return Feeder(channel: channel, admitted: false) }
                    channel.closeFuture.whenComplete { _ in active.withLock { $0 -= 1 } }
                    // The feed secret as it is when the feeder connects.
                    try channel.pipeline.syncOperations.addHandler(
                        FeedConnectionHandler(
                            session: IngestSession(
                                storage: storage, configuration: configuration.stream,
                                decoder: configuration.decoder, applyingOn: pool,
                                onBatchApplied: { [statistics] in statistics.record($0) }),
                            handshake: secrets.feedSecret.map { ComponentHandshake(secret: $0.bytes) },
                            statistics: statistics, logger: logger))
                    return Feeder(channel: channel, admitted: true)
                }
            }
        let port = server.channel.localAddress?.port ?? configuration.feedPort
        logger.info("feed listening", metadata: ["host": "\(configuration.feedHost)", "port": "\(port)"])
        await onBound(port)
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { inbound in
                    for try await feeder in inbound {
                        group.addTask {
                            if feeder.admitted {
                                await Self.untilClosed(feeder.channel)
                            } else {
                                await self.refuse(feeder.channel)
                            }
                        }
                    }
                }
            }
        } onGracefulShutdown: {
            server.channel.close(promise: nil)  // stop accepting; open streams finish
        }
        logger.info("feed stopped")
    }

    /// An accepted connection, and whether it is under ``ServiceConfiguration/maxConnections`` (and so has its
    /// ``FeedConnectionHandler``).
    private struct Feeder: Sendable {
        let channel: any Channel
        let admitted: Bool
    }

    /// Returns when `channel` closes: the feeder's task lasts as long as its connection, which its handler reads
    /// on the event loop. Cancelled (a shutdown that does not wait), it closes the connection.
    private static func untilClosed(_ channel: any Channel) async {
        await withTaskCancellationHandler {
            try? await channel.closeFuture.get()
        } onCancel: {
            channel.close(promise: nil)
        }
    }

    private func refuse(_ channel: any Channel) async {
        logger.warning("feeder refused: too many connections", metadata: ["max": "\(configuration.maxConnections)"])
        var writer = XMPPWriter()
        writer.openStream()
        writer.streamError(
            XMPPStreamError.Condition.policyViolation.rawValue,
            text: "too many connections (at most \(configuration.maxConnections))")
        writer.closeStream()
        try? await channel.writeAndFlush(ByteBuffer(bytes: writer.bytes)).get()
        try? await channel.close()
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
