import NIOCore
import NIOHTTP1

/// Times every request from its head to its response's head, whichever path answers it (the storage fast path
/// or the router), into ``ServiceMetrics``' request-duration histogram by route.
///
/// It sits right after HTTP decoding, in front of both paths, so no answer escapes it. A change stream counts
/// until it opens, not for as long as it lasts. Pipelined requests are answered in order, so the oldest
/// request still waiting is the one a response head belongs to.
final class RequestTimingHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let metrics: ServiceMetrics
    /// Requests read whose response head has not been written, oldest first.
    private var waiting = CircularBuffer<(route: HTTPRouteLabel, started: NIODeadline)>(initialCapacity: 2)

    init(metrics: ServiceMetrics) {
        self.metrics = metrics
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let request) = unwrapInboundIn(data) {
            waiting.append((HTTPRouteLabel(target: request.uri), .now()))
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .head(let head) = unwrapOutboundIn(data), head.status != .continue, let request = waiting.popFirst() {
            metrics.recordRequest(route: request.route, duration: .nanoseconds((.now() - request.started).nanoseconds))
        }
        context.write(data, promise: promise)
    }
}
