import NIOCore

/// Times every request of a connection from its head to its answer's head, whichever path answers it (the event
/// loop or the router), into ``ServiceMetrics``' request-duration histogram by route. A change stream counts until
/// it opens, not for as long as it lasts. Pipelined requests are answered in order, so the oldest request still
/// waiting is the one an answer belongs to.
struct RequestTiming {
    private let metrics: ServiceMetrics
    /// Requests read whose answer has not begun, oldest first.
    private var waiting = CircularBuffer<(route: HTTPRouteLabel, started: NIODeadline)>(initialCapacity: 2)

    init(metrics: ServiceMetrics) {
        self.metrics = metrics
    }

    /// A request's head arrived, for `route` (nil: a path the API does not serve).
    mutating func headArrived(route: ServiceRoute?) {
        waiting.append((route?.label ?? .other, .now()))
    }

    /// The oldest waiting request's answer begins.
    mutating func answerBegins() {
        guard let request = waiting.popFirst() else { return }
        metrics.recordRequest(route: request.route, duration: .nanoseconds((.now() - request.started).nanoseconds))
    }
}
