import HTTPTypes
import NIOCore
import NIOHTTP1
import PresenceStore
import PresenceWire

/// Answers requests on the connection's event loop, before Hummingbird's request handling, when no await is needed:
/// a storage hit, a refusal, a method's rule. It also opens change streams (`GET /v1/presence/events`), which are
/// written on the event loop from then on (``ChannelEventStream``): the connection carries nothing else afterwards.
/// Every other request (a resource's handler, a lookup that probes) passes to the router untouched (see
/// ``PresenceHTTP1Channel``).
///
/// Measured on this project's machine (Documentation/Benchmarks.md): Hummingbird's per-request path (an async task, the
/// async channel's writer, the router) answers about 24,000 requests per second for a constant `/healthz`, where
/// nginx serves a static file at about 50,000 on the same two cores. A presence lookup that hits the storage
/// needs none of that: it is a hash lookup and a few hundred bytes of JSON.
///
/// This handler decides nothing of its own: it acts on ``FrontDoor/decide(_:)``, the decision the router acts on
/// too, so a request gets the same status, header fields and body on either path (`QueryPathEquivalenceTests` holds
/// them to that).
///
/// HTTP/1.1 pipelining keeps its order: while a request handed to the router has not had its response written, the
/// next ones are handed on as well.
final class StorageAnswerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let frontDoor: FrontDoor
    private let serverName: String
    /// Each request timed from its head to its answer.
    private var timing: RequestTiming
    /// The next head's deadline (`--header-timeout`); made when the handler joins its connection's pipeline.
    private let headTimeout: Duration
    private var deadline: RequestHeadDeadline?
    /// The HTTP encoder's context: an answer written there goes to the transport below it, whole
    /// (``AnswerMessage``).
    private var transport: ChannelHandlerContext?
    /// The connection's allocator, for the answers' messages.
    private var allocator = ByteBufferAllocator()
    /// A change stream's request being read, or waiting for the responses routed before it to end, what it asks,
    /// and whether anything the client sent after it was dropped.
    private var streamRequest:
        (head: HTTPRequestHead, asked: EventStreamEndpoint.StreamRequest, ended: Bool, dropped: Bool)?
    /// The change stream this connection carries; nothing is read from the connection once it is open.
    private var stream: ChannelEventStream?
    /// Requests handed to the router whose response has not ended yet.
    private var routed = 0
    /// The parts of the current request go to the router.
    private var routingCurrent = false
    /// Whether a part went to the router since the last end of a read: only then does the end of a read go on.
    /// The async channel hands the router what it was given when a read ends; after a read answered here it would
    /// find nothing, and every handler after this one would be crossed for nothing.
    private var forwardedSinceReadComplete = false
    /// The answer to the current request, written when its end arrives.
    private var pending: (message: AnswerMessage, answer: Ready)?
    private var date = HTTPDate()
    /// The connection's JSON text, reused from answer to answer: a batch's answer is hundreds of kilobytes, and
    /// fresh memory for each one was a tenth of a batch's time in page faults (Documentation/Benchmarks.md). It
    /// starts empty and grows with the first answer: a connection that only streams changes never needs it.
    private var json = JSONWriter(reservingCapacity: 0)
    /// The most memory ``json`` keeps between answers.
    private static let retainedJSONCapacity = 1 << 20
    /// What the connection carries, told once: a change stream when its first request opened one, requests
    /// otherwise (its task then reads them for the router). The promise to tell it until then, what was told after.
    private var use: Telling

    private enum Telling {
        case pending(EventLoopPromise<PresenceHTTP1Channel.Use>)
        case told(PresenceHTTP1Channel.Use)
    }

    init(
        frontDoor: FrontDoor, serverName: String, metrics: ServiceMetrics, headTimeout: Duration,
        use: EventLoopPromise<PresenceHTTP1Channel.Use>
    ) {
        self.frontDoor = frontDoor
        self.serverName = serverName
        self.timing = RequestTiming(metrics: metrics)
        self.headTimeout = headTimeout
        self.use = .pending(use)
    }

    /// Tells what the connection carries, the first time only.
    private func tell(_ carried: PresenceHTTP1Channel.Use) {
        guard case .pending(let promise) = use else { return }
        use = .told(carried)
        promise.succeed(carried)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        transport = try? context.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self)
        allocator = context.channel.allocator
        deadline = RequestHeadDeadline(timeout: headTimeout, eventLoop: context.eventLoop)
        if context.channel.isActive { startDeadline(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        startDeadline(context)
        context.fireChannelActive()
    }

    private func startDeadline(_ context: ChannelHandlerContext) {
        deadline?.start { context.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // A stream's connection carries nothing else: whatever a client sends after a stream's request is dropped
        // (and should the stream be refused, the connection closes after saying why).
        guard stream == nil, streamRequest?.ended != true else {
            streamRequest?.dropped = true
            return
        }
        let part = unwrapInboundIn(data)
        switch part {
        case .head(let request):
            let path = request.path
            let route = ServiceRoute(path: path)
            timing.headArrived(route: route)
            deadline?.headArrived()
            let decision = frontDoor.decide(request, path: path, route: route)
            if case .stream(let asked) = decision, request.method == .GET {
                streamRequest = (request, asked, false, false)
                routingCurrent = false
                return
            }
            tell(.requests)
            if routed == 0, let answer = answer(decision) {
                pending = (AnswerMessage(request), answer)
                routingCurrent = false
            } else {
                routed += 1
                routingCurrent = true
                forward(context: context, data)
            }
        case .body:
            if routingCurrent { forward(context: context, data) }
        case .end:
            if routingCurrent {
                forward(context: context, data)
            } else if streamRequest != nil {
                streamRequest?.ended = true
                if routed == 0 { openStream(context: context) }
            } else if let (message, answer) = pending {
                pending = nil
                switch answer {
                case .answer(let answer): respond(context: context, as: message, with: answer)
                case .storageAnswers: respondWithStorageAnswers(context: context, as: message)
                }
            }
        }
    }

    private func forward(context: ChannelHandlerContext, _ data: NIOAny) {
        forwardedSinceReadComplete = true
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard forwardedSinceReadComplete else { return }
        forwardedSinceReadComplete = false
        context.fireChannelReadComplete()
    }

    /// The router's answers pass here on their way to the encoder: their heads and ends are timed and counted.
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status != .continue:
            timing.answerBegins()
            context.write(data, promise: promise)
        case .end:
            routed = max(routed - 1, 0)
            context.write(data, promise: promise)
            deadline?.answerEnded()
            // A stream asked for after routed requests opens once their responses have ended, in order.
            if routed == 0 && streamRequest?.ended == true { openStream(context: context) }
        default:
            context.write(data, promise: promise)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        stream?.writabilityChanged()
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.stop()
        tell(.requests)
        stream?.connectionClosed()
        stream = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.stop()
        tell(.requests)
    }

    /// A client that closes its side of the connection sends nothing more. The server allows half-closed
    /// connections, so the connection stays open until someone closes it: a stream's reader has left, and its
    /// connection has no request loop to close it, so this handler does; a connection that has asked nothing yet
    /// is handed to the request loop, which answers what came and closes it.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            if case .told(.changeStream) = use {
                context.close(promise: nil)
            } else if streamRequest == nil {
                tell(.requests)
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Opens the change stream whose request was read, or answers why not: the hub's limit is reached.
    private func openStream(context: ChannelHandlerContext) {
        guard let (head, asked, _, dropped) = streamRequest else { return }
        streamRequest = nil
        // Told after the stream opened, or as requests when it did not: the connection then takes more.
        defer { tell(stream == nil ? .requests : .changeStream) }
        // The client may have gone while the routed responses before it were written.
        guard context.channel.isActive else { return }
        // Held before it opens: opening writes, a write can find the connection closed, and the close
        // (`channelInactive`) must reach the stream to let its subscription go.
        let opened = ChannelEventStream(context: context, endpoint: frontDoor.events, version: head.version)
        stream = opened
        guard !opened.open(asked, request: head, date: date.now(), serverName: serverName) else {
            timing.answerBegins()
            return
        }
        stream = nil
        var message = AnswerMessage(head)
        // Requests that came after it were dropped: the refusal closes the connection, so the client knows.
        if dropped { message.keepAlive = false }
        respond(context: context, as: message, with: frontDoor.events.tooManyStreams)
    }

    /// What is ready to answer a request with.
    private enum Ready {
        case answer(ServiceAnswer)
        /// A `200` of the query document in ``json``.
        case storageAnswers
    }

    /// Writes `answer` whole to the transport, as `message` says; then closes the connection if the request asked
    /// to.
    private func respond(context: ChannelHandlerContext, as message: AnswerMessage, with answer: ServiceAnswer) {
        write(context: context, as: message) { message, date in
            message.encode(answer, date: date, serverName: serverName, allocator: allocator)
        }
    }

    /// Writes the query document in ``json``, as ``respond(context:as:with:)`` writes an answer.
    private func respondWithStorageAnswers(context: ChannelHandlerContext, as message: AnswerMessage) {
        write(context: context, as: message) { message, date in
            message.encode(
                status: .ok, fields: ServiceAnswer.jsonFields, bodyCount: json.count, date: date,
                serverName: serverName, allocator: allocator
            ) { buffer in json.withUnsafeBytes { _ = buffer.writeBytes($0) } }
        }
    }

    private func write(
        context: ChannelHandlerContext, as message: AnswerMessage, encode: (AnswerMessage, String) -> ByteBuffer
    ) {
        timing.answerBegins()
        guard let transport else { return context.close(promise: nil) }
        let bytes = NIOAny(IOData.byteBuffer(encode(message, date.now())))
        if message.keepAlive {
            transport.writeAndFlush(bytes, promise: nil)
        } else {
            let channel = context.channel
            transport.writeAndFlush(bytes).whenComplete { _ in channel.close(promise: nil) }
        }
        deadline?.answerEnded()
    }

    /// The answer to `request` as decided, or nil when the router should give it (a resource's handler, or a lookup
    /// that probes).
    private func answer(_ decision: FrontDoor.Decision) -> Ready? {
        switch decision {
        case .answer(let answer): return .answer(answer)
        case .resource: return nil
        // A stream's GET opens it; its HEAD gets the stream's status and fields.
        case .stream: return .answer(EventStreamAnswer.head)
        case .lookup(let jids, let policy):
            if json.reservedCapacity > StorageAnswerHandler.retainedJSONCapacity {
                json = JSONWriter(reservingCapacity: 0)
            } else {
                json.removeAll()
            }
            return frontDoor.queries.writeStorageAnswers(jids, policy: policy, to: &json) ? .storageAnswers : nil
        }
    }
}
