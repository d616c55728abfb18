import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOSSL
import PresenceStore

/// Hummingbird's HTTP/1.1 child channel with ``StorageAnswerHandler`` (storage hits and change streams) in it,
/// right after HTTP decoding.
///
/// The pipeline has what `HTTP1Channel` builds (the same decoder limits, no pipelining assistance, the
/// connection-state handler for idle time and graceful shutdown, the async channel the router reads), with the
/// HTTP/1 encoder and decoder added unpaired (below) and two handlers before the conversion to Swift HTTP Types:
/// ``StorageAnswerHandler`` answers storage hits in NIOHTTP1's own types, without that conversion, and sees each
/// request's HTTP version and keep-alive as the wire had them; ``UnreadableRequestHandler`` answers a head the
/// decoder cannot read. `HTTP1Channel.Configuration.additionalChannelHandlers` can only add handlers after the
/// conversion.
///
/// Hummingbird runs a task per connection, which reads requests for the router. A connection whose first request
/// opens a change stream carries nothing else, written on its event loop (``ChannelEventStream``): its task only
/// waits for the connection to close, so that the server's graceful shutdown still waits for the stream's end,
/// and keeps none of the request-reading machinery (about 4 KiB a stream, Documentation/Benchmarks.md).
struct PresenceHTTP1Channel: HTTPChannelHandler {
    /// What the connection's task is given: the async channel the router reads, and what the connection turned
    /// out to carry (told by ``StorageAnswerHandler`` once its first request is read).
    struct Connection: ServerChildChannelValue {
        let asyncChannel: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>
        let use: EventLoopFuture<Use>
        var channel: any Channel { asyncChannel.channel }
    }

    /// What a connection carries.
    enum Use: Sendable {
        /// Requests, some or all of them for the router.
        case requests
        /// One change stream, from its first request on.
        case changeStream
    }

    typealias Value = Connection

    let responder: HTTPChannelHandler.Responder
    let frontDoor: FrontDoor
    var secrets: ServiceSecrets { frontDoor.admission.secrets }
    let limits: HTTPLimits
    /// Inside TLS: requests are `https`.
    var secure: Bool { secrets.usesTLS }
    let serverName: String
    let metrics: ServiceMetrics

    /// Hummingbird's default limits (`HTTP1Channel.Configuration.DecoderConfiguration`).
    private static let decoderLimits: NIOHTTPDecoderLimitConfiguration = {
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderFieldSize = 80 * 1024
        limits.maxHeaderListSize = 80 * 1024
        limits.maxHeaderFieldCount = 1000
        return limits
    }()

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            // TLS with the certificate in force when the connection is accepted: SIGHUP may renew it for the next.
            if let tls = secrets.tlsContext {
                try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
            }
            // The encoder and the decoder on their own, not `configureHTTPServerPipeline`'s pair: there the decoder
            // tells the encoder each request's method, and the encoder takes the oldest one told for each response
            // it encodes, to leave out a HEAD's body. Answers written below the encoder (``AnswerMessage``) never
            // take theirs, so a routed response after them would be framed by an earlier request's method (a GET's
            // body dropped after a HEAD answered here) and the methods would pile up for the connection's life.
            // The router's HEAD answers have no body of their own (``FrontDoorResponder``).
            try channel.pipeline.syncOperations.addHandlers(
                HTTPResponseEncoder(configuration: .init()),
                ByteToMessageHandler(
                    HTTPRequestDecoder(
                        leftOverBytesStrategy: .dropBytes, limitConfiguration: PresenceHTTP1Channel.decoderLimits)))
            // Completed by the handler once added (at the latest when it is removed), failed if it cannot be.
            let use = channel.eventLoop.makePromise(of: Use.self)
            do {
                try channel.pipeline.syncOperations.addHandler(
                    StorageAnswerHandler(
                        frontDoor: frontDoor, serverName: serverName, metrics: metrics,
                        headTimeout: limits.headerTimeout, use: use))
            } catch {
                use.fail(error)
                throw error
            }
            try channel.pipeline.syncOperations.addHandler(UnreadableRequestHandler(serverName: serverName))
            try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPServerCodec(secure: secure))
            try channel.pipeline.syncOperations.addHandler(HTTPConnectionStateHandler(logger: logger))
            let asyncChannel = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
            return Connection(asyncChannel: asyncChannel, use: use.futureResult)
        }
    }

    func handle(value connection: Value, logger: Logger) async {
        let channel = connection.channel
        // Cancelled (a shutdown that does not wait), the connection is closed as Hummingbird's request loop does:
        // its input first, which the handler hands to the request loop; a stream's connection at once.
        let use = await withTaskCancellationHandler {
            try? await connection.use.get()
        } onCancel: {
            channel.close(mode: .input, promise: nil)
        }
        guard use == .changeStream else {
            return await handleHTTP(asyncChannel: connection.asyncChannel, logger: logger)
        }
        // The async channel stays unread and unfinished until the connection closes: finishing its writer would
        // half-close the stream's connection.
        await withTaskCancellationHandler {
            try? await channel.closeFuture.get()
        } onCancel: {
            channel.close(promise: nil)
        }
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 with storage hits answered on the event loop (``PresenceHTTP1Channel``).
    static func presenceHTTP1(
        frontDoor: FrontDoor, limits: HTTPLimits, serverName: String, metrics: ServiceMetrics
    ) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            PresenceHTTP1Channel(
                responder: responder, frontDoor: frontDoor, limits: limits, serverName: serverName, metrics: metrics)
        }
    }
}
