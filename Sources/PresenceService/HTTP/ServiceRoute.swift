/// The HTTP API's routes, in one table: what a path is, which label its requests are timed under, and whether it
/// is answered without a token. ``ServiceRoutes`` (the method rules), ``HTTPRouteLabel`` (the metrics) and
/// ``APIAccess`` (the open paths) all read a path through ``init(path:)``, and a test holds ``template`` against the
/// OpenAPI document's `paths`.
enum ServiceRoute: CaseIterable, Sendable {
    /// `/v1/presence/{jid}`.
    case presence
    /// `/v1/presence?jid=…`.
    case presenceBatch
    /// `/v1/presence/events`, the change stream.
    case events
    /// `/v1/presence/{jid}/badge.svg`.
    case badge
    case stats
    case metrics
    case healthz
    case readyz
    case openapi
    /// The people page's markup, script and style.
    case page
    case pageScript
    case pageStyle

    /// The path as the OpenAPI document writes it.
    var template: String {
        switch self {
        case .presence: "/v1/presence/{jid}"
        case .presenceBatch: "/v1/presence"
        case .events: "/v1/presence/events"
        case .badge: "/v1/presence/{jid}/badge.svg"
        case .stats: "/v1/stats"
        case .metrics: "/metrics"
        case .healthz: "/healthz"
        case .readyz: "/readyz"
        case .openapi: "/openapi.yaml"
        case .page: "/"
        case .pageScript: "/people.js"
        case .pageStyle: "/people.css"
        }
    }

    /// The route `path` (without its query) is; nil for a path the API does not serve. The presence paths, the
    /// hot ones, are told first and without copying.
    init?(path: Substring) {
        let presence = "/v1/presence"
        if path.hasPrefix(presence) {
            let rest = path.dropFirst(presence.count)
            if rest.isEmpty {
                self = .presenceBatch
                return
            }
            let segment = rest.dropFirst()
            guard rest.first == "/", !segment.isEmpty else { return nil }
            guard let slash = segment.firstIndex(of: "/") else {
                self = segment == "events" ? .events : .presence
                return
            }
            guard slash != segment.startIndex, segment[segment.index(after: slash)...] == "badge.svg" else { return nil }
            self = .badge
            return
        }
        switch path {
        case "/v1/stats": self = .stats
        case "/metrics": self = .metrics
        case "/healthz": self = .healthz
        case "/readyz": self = .readyz
        case "/openapi.yaml": self = .openapi
        case "/": self = .page
        case "/people.js": self = .pageScript
        case "/people.css": self = .pageStyle
        default: return nil
        }
    }

    /// Answered without a token: the health checks, the document, the page's own files (no data), and the
    /// metrics when `metricsOpen`.
    func isOpen(metricsOpen: Bool) -> Bool {
        switch self {
        case .healthz, .readyz, .openapi, .page, .pageScript, .pageStyle: true
        case .metrics: metricsOpen
        case .presence, .presenceBatch, .events, .badge, .stats: false
        }
    }

    /// The `route` label of its requests' durations.
    var label: HTTPRouteLabel {
        switch self {
        case .presence: .presence
        case .presenceBatch: .presenceBatch
        case .events: .events
        case .badge: .badge
        case .stats: .stats
        case .metrics: .metrics
        case .healthz, .readyz: .health
        case .openapi: .openapi
        case .page, .pageScript, .pageStyle: .people
        }
    }
}
