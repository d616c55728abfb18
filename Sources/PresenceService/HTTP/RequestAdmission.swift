import HTTPTypes
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

    /// Decides on a request from its path (without the query) and the values of its `Authorization` and `Cookie`
    /// header fields, and whether it carries ``ReadinessConfiguration/acceptStaleHeader``.
    func decide(path: Substring, authorization: [Substring], cookies: [Substring], acceptsStale: Bool) -> Decision {
        let token: String?
        switch secrets.access.decide(path: path, authorization: authorization, cookies: cookies) {
        case .denied: return .refused(RequestAdmission.notAuthorized)
        case .granted(let name): token = name
        case .open: token = nil
        }
        if readiness.isRefusing, path.hasPrefix(PresenceQueryTarget.prefix.description), !acceptsStale {
            let now = readiness.current
            // Ready again since the monitor's last tick: answer.
            if !now.isReady {
                var answer = ServiceAnswer.error(
                    .serviceUnavailable, "not-ready", "this replica is not ready: \(now.explanation)")
                answer.headers[.retryAfter] = "1"
                return .refused(answer)
            }
        }
        return .admitted(token: token)
    }

    private static let notAuthorized: ServiceAnswer = {
        var answer = ServiceAnswer.error(.unauthorized, "not-authorized", "a valid bearer token is required")
        answer.headers[.wwwAuthenticate] = "Bearer realm=\"presence\""
        return answer
    }()
}

extension HTTPField.Name {
    /// ``ReadinessConfiguration/acceptStaleHeader``, made once.
    static let presenceAcceptStale = HTTPField.Name(ReadinessConfiguration.acceptStaleHeader)!
}
