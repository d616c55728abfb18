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
}
