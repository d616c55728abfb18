import PresenceWire

/// Whether a request may have what it asks for, the first step of ``FrontDoor/decide(_:)``:
///
/// 1. The API's tokens (``APIAccess``): a request for data without a valid token is answered 401 `not-authorized`
///    with `WWW-Authenticate: Bearer realm="presence"` (RFC 6750 §3), the same document whether the token was
///    missing or wrong, so the answer gives no hint which.
/// 2. The replica's readiness: with `--when-not-ready refuse`, presence queries, badges and change streams
///    (``ServiceRoute/readsPresence``) are answered 503 `not-ready` with `Retry-After: 1` while the replica is not
///    ready, unless the request carries ``ReadinessConfiguration/acceptStaleHeader``. Statistics, metrics and the
///    health checks are always answered.
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

    /// Decides on a request for `route` (nil: a path the API does not serve) from its header fields, which are read
    /// only when a rule needs them.
    func decide(_ request: some FrontDoorRequest, route: ServiceRoute?) -> Decision {
        let access = secrets.access
        var token: String?
        if access.requiresToken, route?.isOpen(metricsOpen: access.metricsOpen) != true {
            switch access.authenticate(authorization: request.authorization, cookies: request.cookies) {
            case .denied: return .refused(RequestAdmission.notAuthorized)
            case .granted(let name): token = name
            case .open: break
            }
        }
        if readiness.isRefusing, route?.readsPresence == true, !request.acceptsStale {
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
