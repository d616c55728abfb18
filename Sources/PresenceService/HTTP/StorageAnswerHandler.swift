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

/// Answers presence queries the storage alone can answer, on the connection's event loop, before Hummingbird's
/// request handling; every other request passes through to the router untouched (see ``PresenceHTTP1Channel``).
///
/// Measured on this project's machine (Documentation/Benchmarks.md): Hummingbird's per-request path (an async task, the
/// async channel's writer, the router) answers about 24,000 requests per second for a constant `/healthz`, where
/// nginx serves a static file at about 50,000 on the same two cores. A presence lookup that hits the storage
/// needs none of that: it is a hash lookup and a few hundred bytes of JSON. This handler sits in Hummingbird's
/// pipeline right after HTTP decoding, and answers
/// `GET /v1/presence/{jid}` and `GET /v1/presence?jid=…` itself when ``PresenceLookup/withStorageAnswers(_:policy:_:)``
/// answers every JID. The answers are the same documents the router writes (`QueryDocument`). Anything it does
/// not fully understand (another path or method, a malformed JID or policy, a lookup that needs a probe) goes to
/// the router, which writes the answer or the error as before.
///
/// HTTP/1.1 pipelining keeps its order: while a request handed to the router has not had its response written, the
/// next ones are handed on as well.
///
/// The router's middleware does not see the requests answered here: a check added there must be made here too.
/// Authentication is: a request ``APIAccess`` does not grant goes to the router, whose ``BearerTokenMiddleware``
/// answers 401.
final class StorageAnswerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let lookup: PresenceLookup
    private let live: @Sendable () -> Bool?
    /// Whether the replica refuses queries now (not ready): ``NotReadyMiddleware`` answers them.
    private let refusing: @Sendable () -> Bool
    /// The API's tokens, read per request: SIGHUP may replace them.
    private let secrets: ServiceSecrets
    private let maxBatchJIDs: Int
    private let serverName: String
    /// Requests handed to the router whose response has not ended yet.
    private var routed = 0
    /// The parts of the current request go to the router.
    private var routingCurrent = false
    /// The answer to the current request, written when its end arrives.
    private var pending: (head: HTTPRequestHead, body: ByteBuffer)?
    private var date = HTTPDate()
    /// The connection's JSON text, reused from answer to answer: a batch's answer is hundreds of kilobytes, and
    /// fresh memory for each one was a tenth of a batch's time in page faults (Documentation/Benchmarks.md).
    private var json = JSONWriter(reservingCapacity: 4096)
    /// The most memory ``json`` keeps between answers.
    private static let retainedJSONCapacity = 1 << 20

    /// - Parameter live: whether the XMPP source is live (nil without a source), as the router's answers say.
    init(
        lookup: PresenceLookup, live: @escaping @Sendable () -> Bool?, refusing: @escaping @Sendable () -> Bool,
        secrets: ServiceSecrets, maxBatchJIDs: Int, serverName: String
    ) {
        self.lookup = lookup
        self.live = live
        self.refusing = refusing
        self.secrets = secrets
        self.maxBatchJIDs = maxBatchJIDs
        self.serverName = serverName
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch part {
        case .head(let request):
            if routed == 0, let body = answer(request, allocator: context.channel.allocator) {
                pending = (request, body)
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
            } else if let (request, body) = pending {
                pending = nil
                respond(context: context, to: request, body: body)
            }
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { routed = max(routed - 1, 0) }
        context.write(data, promise: promise)
    }

    private func respond(context: ChannelHandlerContext, to request: HTTPRequestHead, body: ByteBuffer) {
        let keepAlive = request.isKeepAlive
        var headers = HTTPHeaders()
        headers.reserveCapacity(5)
        headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        headers.add(name: "Date", value: date.now())
        headers.add(name: "Server", value: serverName)
        // HTTP/1.0 keeps a connection only when asked to; HTTP/1.1 closes one only when asked to.
        if request.version.major == 1 && request.version.minor == 0 && keepAlive {
            headers.add(name: "Connection", value: "keep-alive")
        } else if !keepAlive {
            headers.add(name: "Connection", value: "close")
        }
        let head = HTTPResponseHead(version: request.version, status: .ok, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        if keepAlive {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        } else {
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
        }
    }

    /// The JSON answer to `request`, or nil when the router should handle it.
    private func answer(_ request: HTTPRequestHead, allocator: ByteBufferAllocator) -> ByteBuffer? {
        // Over the batch limit: the router explains it.
        guard request.method == .GET, let query = PresenceQueryTarget(request.uri), !query.jids.isEmpty,
            query.jids.count <= maxBatchJIDs, !refusing()
        else { return nil }
        let access = secrets.access
        if access.requiresToken {
            let decision = access.authenticate(
                authorization: request.headers["authorization"], cookies: request.headers["cookie"])
            guard decision != .denied else { return nil }
        }
        var policy: LookupPolicy?
        if let raw = query.policy {
            // A policy that probes on a service with nothing to probe: the router refuses it.
            guard let chosen = LookupPolicy(rawValue: raw), chosen == .cacheOnly || lookup.prober != nil else {
                return nil
            }
            policy = chosen
        }
        if json.reservedCapacity > StorageAnswerHandler.retainedJSONCapacity {
            json = JSONWriter(reservingCapacity: 4096)
        } else {
            json.removeAll()
        }
        guard QueryDocument.writeStorageAnswers(query.jids, from: lookup, policy: policy, live: live(), to: &json)
        else { return nil }
        return json.withUnsafeBytes { allocator.buffer(bytes: $0) }
    }
}

/// The `Date` header's value, formatted once per second (RFC 9110 §5.6.7: `Sun, 06 Nov 1994 08:49:37 GMT`).
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
