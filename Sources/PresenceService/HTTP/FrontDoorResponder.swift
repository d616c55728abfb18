import HTTPTypes
import Hummingbird
import Logging
import PresenceSource

/// The router's side of the HTTP API: the requests the event-loop path (``StorageAnswerHandler``) hands on, decided
/// by the same ``FrontDoor/decide(_:)`` and answered by its ``FrontDoor/Decision``: a lookup that needs a probe, a
/// resource's handler (``ResourceResponder``), and whatever a request pipelined behind those asks.
///
/// `HEAD` gets the `GET`'s status and header fields without the body (RFC 9110 §9.3.2). A request that asks to close
/// the connection (`Connection: close`) gets an answer that says so, as RFC 9112 §9.6 asks of a server that closes and
/// as the event-loop path's answers do.
struct FrontDoorResponder: HTTPResponder {
    typealias Context = ServiceRequestContext

    let frontDoor: FrontDoor
    let resources: ResourceResponder

    // Inlined into Hummingbird's call: a task's async stack peak is what it keeps while it waits.
    @inline(__always)
    func respond(to request: Request, context: Context) async throws -> Response {
        var response = await answer(request, context: context)
        if request.method == .head { response = response.createHeadResponse() }
        if Self.asksToClose(request) { response.headers[.connection] = "close" }
        return response
    }

    /// Whether the request's `Connection` field has the `close` option (RFC 9112 §9.6).
    static func asksToClose(_ request: Request) -> Bool {
        request.headers[values: .connection].contains { value in
            value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).lowercased() == "close" }
        }
    }

    @inline(__always)
    private func answer(_ request: Request, context: Context) async -> Response {
        switch frontDoor.decide(request) {
        case .answer(let answer):
            if answer.status.kind != .successful {
                context.logger.debug(
                    "request refused", metadata: ["path": "\(request.uri.path)", "status": "\(answer.status.code)"])
            }
            return answer.response
        case .lookup(let jids, let policy):
            return await frontDoor.queries.answer(jids, policy: policy).response
        case .stream:
            // A stream's GET is always the event-loop path's (``ChannelEventStream``): what reaches here is its HEAD.
            return EventStreamAnswer.head.response
        case .resource(let resource):
            return resources.respond(to: resource, request)
        }
    }
}

extension FrontDoorResponder {
    /// The service's responder.
    init(
        frontDoor: FrontDoor, statistics: ServiceStatistics, metrics: ServiceMetrics, source: XMPPPresenceSource?
    ) {
        let (queries, events, admission) = (frontDoor.queries, frontDoor.events, frontDoor.admission)
        self.init(
            frontDoor: frontDoor,
            resources: ResourceResponder(
                storage: queries.lookup.storage, lookup: queries.lookup, hub: events.hub, statistics: statistics,
                metrics: metrics, readiness: admission.readiness, secrets: admission.secrets, source: source))
    }
}
