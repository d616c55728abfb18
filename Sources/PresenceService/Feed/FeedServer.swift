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
/// A connection's task parses; the feed's ``ApplyPool`` (one per server, ``ServiceConfiguration/applyThreads``
/// threads, shared by all feeders) decodes and applies, each feeder's stanzas in order, so one fast feeder keeps
/// two cores busy. A read of a few stanzas, what a live feeder sends at a time, is parsed and applied by the
/// connection's task on the connection's event loop when nothing of its feeder's waits in the pool
/// (``parsedOnLoopUpTo``): handing it to other threads would cost more than applying it.
/// Reading pauses while a feeder's queue in the pool is full (NIO's async channel back-pressure), so a fast feeder
/// cannot make the service buffer without bound. The service's counters count a stanza once it is applied, so
/// `/v1/stats` never shows an update that queries cannot see yet. A feeder that closes its side has its connection
/// closed once everything it sent is applied. On graceful shutdown it stops accepting and lets open streams finish
/// what they sent.
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

    /// How many bytes are parsed before the feeding task yields to others (queries above all).
    static let sliceBytes = 16 * 1024

    /// A read of at most this many bytes, while everything the feeder sent before is applied, is parsed and
    /// applied on the connection's event loop: a few stanzas, what a live feeder sends at a time, which cost the
    /// loop less than handing them to another thread does. A bigger read is parsed on the global pool.
    static let parsedOnLoopUpTo = 4 * 1024

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
        // The task runs where its reads are best parsed, and stays there while they keep coming that way, so that
        // changing threads is paid once per change of pace rather than once per read. A small read (what a live
        // feeder sends at a time) is parsed and applied on the connection's event loop, where it arrives: no
        // thread of the global pool is woken for it, nor the loop again to write the changes to the streams it
        // serves. Big reads (a feeder sending flat out) are parsed on the global pool, so that event loops keep
        // answering queries meanwhile.
        let loop = EventLoopTaskExecutor(connection.channel.eventLoop)
        func isSmall(_ buffer: ByteBuffer) -> Bool {
            buffer.readableBytes <= FeedServer.parsedOnLoopUpTo && session.isApplied
        }
        do {
            try await connection.executeThenClose { inbound, _ in
                var reads = inbound.makeAsyncIterator()
                var end = try await reads.next().map(RunEnd.read) ?? .closed
                while case .read(let first) = end {
                    let small = isSmall(first)
                    end = try await withTaskExecutorPreference(small ? loop : globalConcurrentExecutor) {
                        var buffer = first
                        while try await consume(buffer, applyingHere: small) {
                            guard let following = try await reads.next() else { return .closed }
                            guard isSmall(following) == small else { return .read(following) }
                            buffer = following
                        }
                        return .ended
                    }
                }
                guard case .closed = end else { return }
                // Waiting for the pool is done off the event loop.
                await withTaskExecutorPreference(globalConcurrentExecutor) {
                    await session.applied()  // then `finish` waits for at most its last batch
                    var failure: XMPPStreamError?
                    do throws(XMPPStreamError) { try session.finish() } catch { failure = error }
                    if let failure {
                        // The feeder went away inside a stanza: nothing to answer, everything before it is
                        // applied.
                        statistics.streamErrorOccurred()
                        logger.warning(
                            "feeder stream cut",
                            metadata: ["condition": "\(failure.condition.rawValue)", "error": "\(failure.message)"])
                    }
                }
            }
        } catch {
            logger.debug("feeder connection error", metadata: ["error": "\(error)"])
        }

        /// Parses and applies one read; false once the stream is over (an error, or a refused handshake).
        func consume(_ buffer: ByteBuffer, applyingHere: Bool) async throws -> Bool {
            // Parse in slices and yield between them: feeders share the task pool with the query API, and a busy
            // feeder must not hold a thread for a whole 64 KiB read while queries wait.
            var remaining = buffer
            while let slice = remaining.readSlice(length: min(remaining.readableBytes, FeedServer.sliceBytes)) {
                // Parsed on the loop only while the pool holds nothing of the feeder's: there is room.
                if !applyingHere { await session.readyForInput() }
                let failure = slice.withUnsafeReadableBytes { bytes -> XMPPStreamError? in
                    do throws(XMPPStreamError) {
                        try session.feed(bytes, applyingHere: applyingHere)
                        return nil
                    } catch {
                        return error
                    }
                }
                if let handshake {
                    let answer = handshake.takeOutput()
                    if !answer.isEmpty {
                        try await connection.channel.writeAndFlush(ByteBuffer(bytes: answer)).get()
                    }
                }
                if let failure {
                    try await end(
                        connection, with: failure, streamOpen: handshake.map { $0.state != .awaitingHeader } ?? false,
                        logger: logger)
                    return false
                }
                if case .refused(let reason) = handshake?.state {
                    try await refuseUnauthorized(connection, reason: reason, logger: logger)
                    return false
                }
                if applyingHere { break }  // one slice: the read is small
                await Task.yield()
                if remaining.readableBytes == 0 { break }
            }
            return true
        }
        logger.info("feeder disconnected")
    }

    /// Ends a stream after a parse error; `streamOpen`: the service's stream header was already sent.
    private func end(
        _ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>, with error: XMPPStreamError, streamOpen: Bool = false,
        logger: Logger
    ) async throws {
        statistics.streamErrorOccurred()
        logger.warning(
            "feeder stream error",
            metadata: [
                "condition": "\(error.condition.rawValue)", "line": "\(error.position.line)",
                "column": "\(error.position.column)",
                "error": "\(error.message)",
            ])
        var writer = XMPPWriter()
        if !streamOpen { writer.openStream() }
        writer.streamError(for: error)
        writer.closeStream()
        try await connection.channel.writeAndFlush(ByteBuffer(bytes: writer.bytes)).get()
    }

    /// Ends the stream of a feeder that did not prove the feed secret (XEP-0114): `not-authorized`, no detail.
    private func refuseUnauthorized(
        _ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>, reason: String, logger: Logger
    ) async throws {
        statistics.streamErrorOccurred()
        logger.warning("feeder not authorized", metadata: ["reason": "\(reason)"])
        var writer = XMPPWriter()
        writer.streamError("not-authorized")  // RFC 6120 §4.9.3.12
        writer.closeStream()
        try await connection.channel.writeAndFlush(ByteBuffer(bytes: writer.bytes)).get()
    }
}

/// How a run of a feeder's reads of one size ended (``FeedServer``).
private enum RunEnd {
    /// A read of the other size, to be parsed where reads of that size are.
    case read(ByteBuffer)
    /// The feeder closed its side: the stream is finished once everything it sent is applied.
    case closed
    /// The stream is over: an error was answered, or the handshake refused.
    case ended
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
