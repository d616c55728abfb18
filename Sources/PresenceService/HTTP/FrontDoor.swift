import HTTPTypes
import NIOCore
import PresenceModel
import PresenceStore
import PresenceWire

/// What every request gets, decided by one call whichever path carries it: the event-loop path
/// (``StorageAnswerHandler``) and the router (``FrontDoorResponder``) both call ``decide(_:)`` and act on its
/// ``Decision``, so a request gets the same status, header fields and body on either (`QueryPathEquivalenceTests`).
///
/// The rules, in order:
/// 1. The route (``ServiceRoute``), from the path.
/// 2. Admission (``RequestAdmission``): tokens, then readiness.
/// 3. RFC 9110's method rules: every path takes `GET` and `HEAD` (the `GET`'s status and header fields, no body;
///    §9.3.2) and `OPTIONS` (204 with `Allow`; §9.3.7; no CORS); any other method on a known path is 405 with `Allow`
///    (§15.5.6); a path outside the table is 404 `not-found`, whatever the method.
/// 4. The route's own rules: a presence query's (``QueryEndpoint``), a change stream's (``EventStreamEndpoint``);
///    every other route is its handler's (``ResourceResponder``).
struct FrontDoor: Sendable {
    let admission: RequestAdmission
    let queries: QueryEndpoint
    let events: EventStreamEndpoint

    enum Decision {
        /// Answer this: a refusal, a method's rule, a path not served.
        case answer(ServiceAnswer)
        /// The presence of these users under this policy (the lookup's default when nil): from the storage when it
        /// holds every answer, otherwise by probing the XMPP server.
        case lookup(jids: [BareJID], policy: LookupPolicy?)
        /// A change stream of these people: opened for `GET`, its status and header fields for `HEAD`.
        case stream(EventStreamEndpoint.StreamRequest)
        /// A resource its handler answers.
        case resource(ServiceResource)
    }

    /// The `Allow` field's value for every path.
    static let allow = "GET, HEAD, OPTIONS"

    static let notFound = ServiceAnswer.error(.notFound, "not-found", "no such resource")
    static let options = ServiceAnswer(status: .noContent, fields: [.init(name: .allow, value: allow)], body: ByteBuffer())

    func decide(_ request: some FrontDoorRequest) -> Decision {
        let path = request.path
        return decide(request, path: path, route: ServiceRoute(path: path))
    }

    /// The decision on `request`, whose `path` is the route table's `route` (nil: a path the API does not serve),
    /// for a caller that told them already.
    func decide(_ request: some FrontDoorRequest, path: Substring, route: ServiceRoute?) -> Decision {
        if case .refused(let answer) = admission.decide(request, route: route) { return .answer(answer) }
        guard let route else { return .answer(Self.notFound) }
        switch request.methodKind {
        case .get, .head: break
        case .options: return .answer(Self.options)
        case .other(let method):
            return .answer(
                ServiceAnswer.error(
                    .methodNotAllowed, "not-allowed", "\(method) is not allowed on \(path): use \(Self.allow)"
                ).adding(.allow, Self.allow))
        }
        switch route {
        case .presence, .presenceBatch:
            switch queries.decide(request.target, jidSegment: route.jidSegment(in: path)) {
            case .lookup(let jids, let policy): return .lookup(jids: jids, policy: policy)
            case .refused(let answer): return .answer(answer)
            }
        case .events:
            switch events.decide(target: request.target) {
            case .stream(let asked): return .stream(asked)
            case .refused(let answer): return .answer(answer)
            }
        case .resource(let resource):
            return .resource(resource)
        }
    }
}
