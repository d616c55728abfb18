/// Which of the service's routes a request path is for: the `route` label of the request-duration histogram.
///
/// A fixed, small set, so a client that asks for a million different JIDs or paths adds no label value. Each
/// label's raw value is its place in ``allCases``: every request records one duration, and the histogram's series
/// are an array indexed by it rather than a dictionary keyed by the label's text, which would hash the text each
/// time.
enum HTTPRouteLabel: Int, CaseIterable, Sendable {
    /// `GET /v1/presence/{jid}`.
    case presence
    /// `GET /v1/presence?jid=…`.
    case presenceBatch
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

    /// The label's value in the exposition.
    var name: String {
        switch self {
        case .presence: "presence"
        case .presenceBatch: "presence-batch"
        case .events: "events"
        case .badge: "badge"
        case .stats: "stats"
        case .metrics: "metrics"
        case .health: "health"
        case .people: "people"
        case .openapi: "openapi"
        case .other: "other"
        }
    }
}
