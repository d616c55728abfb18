import HTTPTypes
import Hummingbird
import NIOHTTP1
import PresenceWire

/// Whether a request may have what it asks for, decided once per request by whichever path answers it (the
/// event-loop path, ``StorageAnswerHandler``, or the router's ``FrontDoorResponder``):
///
/// 1. The API's tokens (``APIAccess``): a request for data without a valid token is answered 401 `not-authorized`
///    with `WWW-Authenticate: Bearer realm="presence"` (RFC 6750 §3), the same document whether the token was
///    missing or wrong, so the answer gives no hint which.
/// 2. The replica's readiness: with `--when-not-ready refuse`, presence queries and change streams are answered
///    503 `not-ready` with `Retry-After: 1` while the replica is not ready, unless the request carries
///    ``ReadinessConfiguration/acceptStaleHeader``. Statistics, metrics and the health checks are always answered.
struct RequestAdmission: Sendable {
    /// Read per request: SIGHUP may replace the tokens.
    let secrets: ServiceSecrets
    let readiness: ReadinessMonitor

    enum Decision {
        /// Go on; with the name of the token presented, when one was needed.
        case admitted(token: String?)
        /// Answer this instead.
        case refused(ServiceAnswer)
    }

    /// Decides on a request from its path and header fields, which are read only when a rule needs them.
    func decide(_ request: some AdmissionRequest) -> Decision {
        let access = secrets.access
        var token: String?
        if access.requiresToken {
            switch access.decide(path: request.path, authorization: request.authorization, cookies: request.cookies) {
            case .denied: return .refused(RequestAdmission.notAuthorized)
            case .granted(let name): token = name
            case .open: break
            }
        }
        if readiness.isRefusing, request.path.hasPrefix(PresenceQueryTarget.prefix.description), !request.acceptsStale {
            let now = readiness.current
            // Ready again since the monitor's last tick: answer.
            if !now.isReady {
                return .refused(
                    ServiceAnswer.error(
                        .serviceUnavailable, "not-ready", "this replica is not ready: \(now.explanation)"
                    ).adding(.retryAfter, "1"))
            }
        }
        return .admitted(token: token)
    }

    private static let notAuthorized = ServiceAnswer.error(
        .unauthorized, "not-authorized", "a valid bearer token is required"
    ).adding(.wwwAuthenticate, "Bearer realm=\"presence\"")
}

/// What ``RequestAdmission`` reads of a request, from either path's request type.
protocol AdmissionRequest {
    /// The path, without the query.
    var path: Substring { get }
    /// The values of `Authorization`.
    var authorization: [Substring] { get }
    /// The values of `Cookie`.
    var cookies: [Substring] { get }
    /// Whether ``ReadinessConfiguration/acceptStaleHeader`` is there.
    var acceptsStale: Bool { get }
}

extension Request: AdmissionRequest {
    var path: Substring { Substring(uri.path) }
    var authorization: [Substring] { headers[values: .authorization].map { $0[...] } }
    var cookies: [Substring] { headers[values: .cookie].map { $0[...] } }
    var acceptsStale: Bool { headers[.presenceAcceptStale] != nil }
}

extension HTTPRequestHead: AdmissionRequest {
    var path: Substring { uri.utf8.firstIndex(of: UInt8(ascii: "?")).map { uri[..<$0] } ?? uri[...] }
    var authorization: [Substring] { headers["authorization"].map { $0[...] } }
    var cookies: [Substring] { headers["cookie"].map { $0[...] } }
    var acceptsStale: Bool { headers.contains(name: ReadinessConfiguration.acceptStaleHeader) }
}

extension HTTPField.Name {
    /// ``ReadinessConfiguration/acceptStaleHeader``, made once.
    static let presenceAcceptStale = HTTPField.Name(ReadinessConfiguration.acceptStaleHeader)!
}
