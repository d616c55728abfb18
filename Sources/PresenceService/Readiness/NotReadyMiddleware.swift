import HTTPTypes
import Hummingbird
import PresenceWire

/// Answers `503 not-ready` to presence queries and change streams while the replica is not ready and told to
/// refuse (``ReadinessConfiguration/WhenNotReady/refuse``), unless the request carries
/// ``ReadinessConfiguration/acceptStaleHeader``. Statistics, metrics and the health checks are always answered.
/// ``StorageAnswerHandler`` hands every request to the router while the replica refuses, so this one decides.
struct NotReadyMiddleware: RouterMiddleware {
    typealias Context = ServiceRequestContext

    let monitor: ReadinessMonitor

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard monitor.isRefusing, request.uri.path.hasPrefix("/v1/presence"),
            request.headers[.presenceAcceptStale] == nil
        else { return try await next(request, context) }
        let readiness = monitor.current
        // Ready again since the last tick: answer.
        if readiness.isReady { return try await next(request, context) }
        var response = QueryRoutes.json(
            ErrorDocument(
                ErrorReport(condition: "not-ready", message: "this replica is not ready: \(readiness.explanation)")),
            status: .serviceUnavailable)
        response.headers[.retryAfter] = "1"
        return response
    }
}

extension HTTPField.Name {
    /// ``ReadinessConfiguration/acceptStaleHeader``, made once.
    static let presenceAcceptStale = HTTPField.Name(ReadinessConfiguration.acceptStaleHeader)!
}
