import HTTPTypes
import Hummingbird

/// RFC 9110's method rules for the methods no route takes (``ServiceRoutes``): `OPTIONS` of a known path is 204
/// with `Allow`, any other method 405 with `Allow` and an error document (`not-allowed`). `GET` and `HEAD` go on to
/// the routes (the router answers `HEAD` from the `GET` route, without the body); an unknown path goes on to the
/// router's 404.
struct MethodMiddleware: RouterMiddleware {
    typealias Context = ServiceRequestContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard !ServiceRoutes.isRead(request.method), ServiceRoutes.isKnown(Substring(request.uri.path)) else {
            return try await next(request, context)
        }
        guard request.method != .options else {
            return Response(status: .noContent, headers: [.allow: ServiceRoutes.allow])
        }
        return ServiceAnswer.error(
            .methodNotAllowed, "not-allowed",
            "\(request.method.rawValue) is not allowed on \(request.uri.path): use \(ServiceRoutes.allow)"
        ).adding(.allow, ServiceRoutes.allow).response
    }
}
