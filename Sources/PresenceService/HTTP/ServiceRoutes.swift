import HTTPTypes

/// The paths the HTTP API serves and the methods each takes: the one table behind RFC 9110's method rules.
///
/// Every path answers `GET`, `HEAD` (the `GET`'s status and header fields, no body; §9.3.2) and `OPTIONS` (204 with
/// `Allow`; §9.3.7; no CORS). Any other method on a known path is 405 with `Allow` (§15.5.6); a path outside the table
/// is 404, whatever the method.
enum ServiceRoutes {
    /// The `Allow` field's value for every path.
    static let allow = "GET, HEAD, OPTIONS"

    /// The fixed paths.
    private static let fixed: Set<Substring> = [
        "/", "/people.js", "/people.css", "/openapi.yaml", "/healthz", "/readyz", "/metrics", "/v1/stats",
        "/v1/presence", "/v1/presence/events",
    ]

    /// Whether `path` (without the query) is one the API serves: a fixed path, `/v1/presence/{jid}` or
    /// `/v1/presence/{jid}/badge.svg`.
    static func isKnown(_ path: Substring) -> Bool {
        if fixed.contains(path) { return true }
        let prefix = "/v1/presence/"
        guard path.hasPrefix(prefix) else { return false }
        let segments = path.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        switch segments.count {
        case 1: return !segments[0].isEmpty
        case 2: return !segments[0].isEmpty && segments[1] == "badge.svg"
        default: return false
        }
    }

    /// Whether the method reads a resource the table has: `GET` and `HEAD` go to the routes.
    static func isRead(_ method: HTTPRequest.Method) -> Bool { method == .get || method == .head }
}
