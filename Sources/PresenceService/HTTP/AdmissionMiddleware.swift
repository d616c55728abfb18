import HTTPTypes
import Hummingbird
import Logging

/// The router's side of ``RequestAdmission``: before any route sees a request, answers what the admission refuses
/// and lets everything else through.
struct AdmissionMiddleware: RouterMiddleware {
    typealias Context = ServiceRequestContext

    let admission: RequestAdmission

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let decision = admission.decide(request)
        switch decision {
        case .admitted(let token):
            if let token { context.logger.trace("request authorized", metadata: ["token": "\(token)"]) }
            return try await next(request, context)
        case .refused(let answer):
            context.logger.debug(
                "request refused", metadata: ["path": "\(request.uri.path)", "status": "\(answer.status.code)"])
            return answer.response
        }
    }
}
