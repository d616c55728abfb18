import HTTPTypes
import NIOCore
import NIOHTTP1
import PresenceStore
import PresenceWire

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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
    /// The answer to the current request, written when its end arrives.
    private var pending: (head: HTTPRequestHead, answer: ServiceAnswer)?
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

    init(frontDoor: FrontDoor, serverName: String, use: EventLoopPromise<PresenceHTTP1Channel.Use>) {
        self.frontDoor = frontDoor
        self.serverName = serverName
        self.use = .pending(use)
    }

    /// Tells what the connection carries, the first time only.
    private func tell(_ carried: PresenceHTTP1Channel.Use) {
        guard case .pending(let promise) = use else { return }
        use = .told(carried)
        promise.succeed(carried)
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
            let decision = frontDoor.decide(request)
            if case .stream(let asked) = decision, request.method == .GET {
                streamRequest = (request, asked, false, false)
                routingCurrent = false
                return
            }
            tell(.requests)
            if routed == 0, let answer = answer(decision, to: request, allocator: context.channel.allocator) {
                pending = (request, answer)
                routingCurrent = false
            } else {
                routed += 1
                routingCurrent = true
                context.fireChannelRead(data)
            }
        case .body:
            if routingCurrent { context.fireChannelRead(data) }
        case .end:
            if routingCurrent {
                context.fireChannelRead(data)
            } else if streamRequest != nil {
                streamRequest?.ended = true
                if routed == 0 { openStream(context: context) }
            } else if let (request, answer) = pending {
                pending = nil
                respond(context: context, to: request, with: answer)
            }
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data), routed > 0 else { return context.write(data, promise: promise) }
        routed -= 1
        context.write(data, promise: promise)
        // A stream asked for after routed requests opens once their responses have ended, in order.
        if routed == 0 && streamRequest?.ended == true { openStream(context: context) }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        stream?.writabilityChanged()
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        tell(.requests)
        stream?.connectionClosed()
        stream = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
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
        guard !opened.open(asked, request: head, date: date.now(), serverName: serverName) else { return }
        stream = nil
        var request = head
        // Requests that came after it were dropped: the refusal closes the connection, so the client knows.
        if dropped { request.headers.replaceOrAdd(name: "Connection", value: "close") }
        respond(context: context, to: request, with: frontDoor.events.tooManyStreams)
    }

    private func respond(context: ChannelHandlerContext, to request: HTTPRequestHead, with answer: ServiceAnswer) {
        let keepAlive = request.isKeepAlive
        var headers = HTTPHeaders()
        headers.reserveCapacity(answer.fields.count + 4)
        for field in answer.fields { headers.add(name: field.name.rawName, value: field.value) }
        headers.add(name: "Content-Length", value: String(answer.body.readableBytes))
        headers.add(name: "Date", value: date.now())
        headers.add(name: "Server", value: serverName)
        // HTTP/1.0 keeps a connection only when asked to; HTTP/1.1 closes one only when asked to.
        if request.version.major == 1 && request.version.minor == 0 && keepAlive {
            headers.add(name: "Connection", value: "keep-alive")
        } else if !keepAlive {
            headers.add(name: "Connection", value: "close")
        }
        let status = HTTPResponseStatus(statusCode: answer.status.code)
        let head = HTTPResponseHead(version: request.version, status: status, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        // HEAD: the GET's header fields, Content-Length included, and no body (RFC 9110 §9.3.2).
        if request.method != .HEAD { context.write(wrapOutboundOut(.body(.byteBuffer(answer.body))), promise: nil) }
        if keepAlive {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        } else {
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
        }
    }

    /// The answer to `request` as decided, or nil when the router should give it (a resource's handler, or a lookup
    /// that probes).
    private func answer(
        _ decision: FrontDoor.Decision, to request: HTTPRequestHead, allocator: ByteBufferAllocator
    ) -> ServiceAnswer? {
        switch decision {
        case .answer(let answer): return answer
        case .resource: return nil
        case .stream: return EventStreamAnswer.head
        case .lookup(let jids, let policy):
            if json.reservedCapacity > StorageAnswerHandler.retainedJSONCapacity {
                json = JSONWriter(reservingCapacity: 0)
            } else {
                json.removeAll()
            }
            guard frontDoor.queries.writeStorageAnswers(jids, policy: policy, to: &json) else { return nil }
            return ServiceAnswer(
                status: .ok, fields: ServiceAnswer.jsonFields,
                body: json.withUnsafeBytes { allocator.buffer(bytes: $0) })
        }
    }
}

/// The `Date` header's value, formatted once per second (RFC 9110 §5.6.7: `Sun, 06 Nov 1994 08:49:37 GMT`): the
/// router's answers get theirs from Hummingbird's own cache, which is internal to it.
struct HTTPDate {
    private var second: time_t = -1
    private var text = ""

    mutating func now() -> String {
        var current = time(nil)
        guard current != second else { return text }
        second = current
        var parts = tm()
        gmtime_r(&current, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        text =
            "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
        return text
    }
}
