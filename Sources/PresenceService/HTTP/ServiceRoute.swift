/// The HTTP API's routes, in one table: what a path is, which label its requests are timed under, whether it is
/// answered without a token or while the replica is not ready, and where a JID sits in it. ``FrontDoor`` decides
/// every request by it, ``HTTPRouteLabel`` (the metrics) and ``APIAccess`` (the open paths) read it, the router's
/// handlers are one per ``ServiceResource``, and a test holds ``template`` against the OpenAPI document's `paths`.
enum ServiceRoute: Hashable, Sendable {
    /// `/v1/presence/{jid}`.
    case presence
    /// `/v1/presence?jid=…`.
    case presenceBatch
    /// `/v1/presence/events`, the change stream.
    case events
    /// A resource the router's handler answers.
    case resource(ServiceResource)

    /// Every route, as the OpenAPI document lists them.
    static let allCases: [ServiceRoute] =
        [.presence, .presenceBatch, .events] + ServiceResource.allCases.map { .resource($0) }

    /// The path as the OpenAPI document writes it.
    var template: String {
        switch self {
        case .presence: "/v1/presence/{jid}"
        case .presenceBatch: "/v1/presence"
        case .events: "/v1/presence/events"
        case .resource(let resource): resource.template
        }
    }

    /// The route `path` (without its query) is; nil for a path the API does not serve. Read as bytes: it runs for
    /// every request, twice (the timing and the decision).
    init?(path: Substring) {
        var path = path
        guard let route = path.withUTF8({ ServiceRoute(path: $0) }) else { return nil }
        self = route
    }

    init?(path: UnsafeBufferPointer<UInt8>) {
        if path.starts(with: Self.presencePrefix.utf8) {
            let rest = path[Self.presencePrefix.utf8.count...]
            if rest.isEmpty {
                self = .presenceBatch
                return
            }
            let segment = rest.dropFirst()
            guard rest.first == UInt8(ascii: "/"), !segment.isEmpty else { return nil }
            guard let slash = segment.firstIndex(of: UInt8(ascii: "/")) else {
                self = segment.elementsEqual("events".utf8) ? .events : .presence
                return
            }
            guard slash != segment.startIndex, segment[(slash + 1)...].elementsEqual("badge.svg".utf8) else {
                return nil
            }
            self = .resource(.badge)
            return
        }
        guard let resource = ServiceResource.allCases.first(where: { $0.fixedPath?.utf8.elementsEqual(path) == true })
        else { return nil }
        self = .resource(resource)
    }

    private static let presencePrefix = "/v1/presence"

    /// The JID's segment of `path` (still percent-encoded) for the routes that name one person in their path.
    /// Cut in UTF-8 code units, as the table reads paths (a count of `Character`s walks grapheme breaks).
    func jidSegment(in path: Substring) -> Substring? {
        let segment = path.utf8.dropFirst(Self.presencePrefix.utf8.count + 1)
        switch self {
        case .presence: return Substring(segment)
        case .resource(.badge): return Substring(segment.dropLast("/badge.svg".utf8.count))
        default: return nil
        }
    }

    /// Answered without a token: the health checks, the document, the page's own files (no data), and the
    /// metrics when `metricsOpen`.
    func isOpen(metricsOpen: Bool) -> Bool {
        switch self {
        case .resource(.healthz), .resource(.readyz), .resource(.openapi), .resource(.page),
            .resource(.pageScript), .resource(.pageStyle):
            true
        case .resource(.metrics): metricsOpen
        case .presence, .presenceBatch, .events, .resource(.badge), .resource(.stats): false
        }
    }

    /// Presence itself: refused while the replica is not ready and configured to refuse
    /// (``ReadinessConfiguration/whenNotReady``).
    var readsPresence: Bool {
        switch self {
        case .presence, .presenceBatch, .events, .resource(.badge): true
        case .resource: false
        }
    }

    /// The `route` label of its requests' durations.
    var label: HTTPRouteLabel {
        switch self {
        case .presence: .presence
        case .presenceBatch: .presenceBatch
        case .events: .events
        case .resource(.badge): .badge
        case .resource(.stats): .stats
        case .resource(.metrics): .metrics
        case .resource(.healthz), .resource(.readyz): .health
        case .resource(.openapi): .openapi
        case .resource(.page), .resource(.pageScript), .resource(.pageStyle): .people
        }
    }
}

/// The routes the router's handlers answer (``ResourceResponder``): everything but the presence queries and the
/// change stream, which ``FrontDoor`` decides whole.
enum ServiceResource: CaseIterable, Sendable {
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
    var template: String { fixedPath ?? "/v1/presence/{jid}/badge.svg" }

    /// The path, for the resources that have one path.
    var fixedPath: String? {
        switch self {
        case .badge: nil
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
}
