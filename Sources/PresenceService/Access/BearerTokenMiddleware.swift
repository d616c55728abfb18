import HTTPTypes
import Hummingbird
import Logging
import PresenceWire

/// Answers 401 to a request ``APIAccess`` denies, before any route sees it; lets every other request through.
///
/// The 401 carries `WWW-Authenticate: Bearer realm="presence"` (RFC 6750 §3) and the same error document whether
/// the token was missing or wrong: the answer gives no hint which. ``StorageAnswerHandler`` answers storage hits
/// before the router, so it makes the same decision and leaves what it denies to this middleware.
struct BearerTokenMiddleware: RouterMiddleware {
    typealias Context = ServiceRequestContext

    /// Read per request: SIGHUP may replace the tokens.
    let secrets: ServiceSecrets

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let decision = secrets.access.decide(
            path: Substring(request.uri.path), authorization: request.headers[values: .authorization].map { $0[...] },
            cookies: request.headers[values: .cookie].map { $0[...] })
        switch decision {
        case .open:
            return try await next(request, context)
        case .granted(let name):
            context.logger.trace("request authorized", metadata: ["token": "\(name)"])
            return try await next(request, context)
        case .denied:
            context.logger.debug("request without a valid token", metadata: ["path": "\(request.uri.path)"])
            var response = QueryRoutes.json(
                ErrorDocument(ErrorReport(condition: "not-authorized", message: "a valid bearer token is required")),
                status: .unauthorized)
            response.headers[.wwwAuthenticate] = "Bearer realm=\"presence\""
            return response
        }
    }
}
