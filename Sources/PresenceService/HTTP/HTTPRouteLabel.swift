/// Which of the service's routes a request path is for: the `route` label of the request-duration histogram.
///
/// A fixed, small set, so a client that asks for a million different JIDs or paths adds no label value.
enum HTTPRouteLabel: String, CaseIterable, Sendable {
    /// `GET /v1/presence/{jid}`.
    case presence
    /// `GET /v1/presence?jid=…`.
    case presenceBatch = "presence-batch"
    /// `GET /v1/presence/events`: the time until the stream opens.
    case events
    case badge
    case stats
    case metrics
    /// `/healthz` and `/readyz`.
    case health
    /// The people page's files.
    case people
    case openapi
    /// Anything else, unknown paths included.
    case other

    /// The route of a request target (`/v1/presence/a%40b?policy=cache-only`). Presence paths, the hot ones, are
    /// told first and without copying the target.
    init(target: String) {
        let path = target.firstIndex(of: "?").map { target[..<$0] } ?? target[...]
        if path.hasPrefix("/v1/presence") {
            if path == "/v1/presence" {
                self = .presenceBatch
            } else if path == "/v1/presence/events" {
                self = .events
            } else if path.hasPrefix("/v1/presence/") {
                self = path.hasSuffix("/badge.svg") ? .badge : .presence
            } else {
                self = .other
            }
            return
        }
        switch path {
        case "/v1/stats": self = .stats
        case "/metrics": self = .metrics
        case "/healthz", "/readyz": self = .health
        case "/openapi.yaml": self = .openapi
        default: self = PeoplePage.isPageFile(path) ? .people : .other
        }
    }
}
