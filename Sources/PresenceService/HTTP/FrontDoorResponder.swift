import HTTPTypes
import Hummingbird
import Logging

/// What every request to the router meets before the routes, in one responder rather than a chain of middleware
/// (each link of which a change stream's task would keep the stack space of for the stream's life):
///
/// 1. ``RequestAdmission``: a request it refuses gets its answer (401, or 503 `not-ready`).
/// 2. RFC 9110's method rules for the methods no route takes (``ServiceRoutes``): `OPTIONS` of a known path is 204
///    with `Allow`; any other method but `GET` and `HEAD` is 405 with `Allow` and an error document
///    (`not-allowed`). An unknown path goes on to the router's 404.
///
/// `GET` and `HEAD` go on to the routes; the router answers `HEAD` from the `GET` route, without the body. A request
/// that asks to close the connection (`Connection: close`) gets an answer that says so, as RFC 9112 §9.6 asks of a
/// server that closes and as the event-loop path's answers do.
struct FrontDoorResponder<Routes: HTTPResponder>: HTTPResponder where Routes.Context == ServiceRequestContext {
    typealias Context = ServiceRequestContext

    let routes: Routes
    let admission: RequestAdmission

    // Inlined into Hummingbird's call: a change stream's task keeps the peak of its async stack for the stream's life,
    // and this frame cost each stream 1 KiB of resident memory (EventStreamLoad, 2,000 streams).
    @inline(__always)
    func respond(to request: Request, context: Context) async throws -> Response {
        var response = try await answer(request, context: context)
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
    private func answer(_ request: Request, context: Context) async throws -> Response {
        switch admission.decide(request) {
        case .admitted(let token):
            if let token { context.logger.trace("request authorized", metadata: ["token": "\(token)"]) }
        case .refused(let answer):
            context.logger.debug(
                "request refused", metadata: ["path": "\(request.uri.path)", "status": "\(answer.status.code)"])
            return answer.response
        }
        if !ServiceRoutes.isRead(request.method), ServiceRoutes.isKnown(Substring(request.uri.path)) {
            guard request.method != .options else {
                return Response(status: .noContent, headers: [.allow: ServiceRoutes.allow])
            }
            return ServiceAnswer.error(
                .methodNotAllowed, "not-allowed",
                "\(request.method.rawValue) is not allowed on \(request.uri.path): use \(ServiceRoutes.allow)"
            ).adding(.allow, ServiceRoutes.allow).response
        }
        return try await routes.respond(to: request, context: context)
    }
}
