import HTTPTypes
import NIOHTTP1
import PresenceWire

/// Whether a request may have what it asks for, decided once per request by whichever path answers it (the
/// event-loop path, ``StorageAnswerHandler``, or the router's ``AdmissionMiddleware``):
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

    /// Decides on a request from its path (without the query) and its header fields, which are read only when a
    /// rule needs them.
    func decide(path: Substring, fields: some AdmissionFields) -> Decision {
        let access = secrets.access
        var token: String?
        if access.requiresToken {
            switch access.decide(path: path, authorization: fields.authorization, cookies: fields.cookies) {
            case .denied: return .refused(RequestAdmission.notAuthorized)
            case .granted(let name): token = name
            case .open: break
            }
        }
        if readiness.isRefusing, path.hasPrefix(PresenceQueryTarget.prefix.description), !fields.acceptsStale {
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

/// The header fields ``RequestAdmission`` reads, from either path's request type.
protocol AdmissionFields {
    /// The values of `Authorization`.
    var authorization: [Substring] { get }
    /// The values of `Cookie`.
    var cookies: [Substring] { get }
    /// Whether ``ReadinessConfiguration/acceptStaleHeader`` is there.
    var acceptsStale: Bool { get }
}

extension HTTPFields: AdmissionFields {
    var authorization: [Substring] { self[values: .authorization].map { $0[...] } }
    var cookies: [Substring] { self[values: .cookie].map { $0[...] } }
    var acceptsStale: Bool { self[.presenceAcceptStale] != nil }
}

extension HTTPHeaders: AdmissionFields {
    var authorization: [Substring] { self["authorization"].map { $0[...] } }
    var cookies: [Substring] { self["cookie"].map { $0[...] } }
    var acceptsStale: Bool { contains(name: ReadinessConfiguration.acceptStaleHeader) }
}

extension HTTPField.Name {
    /// ``ReadinessConfiguration/acceptStaleHeader``, made once.
    static let presenceAcceptStale = HTTPField.Name(ReadinessConfiguration.acceptStaleHeader)!
}
