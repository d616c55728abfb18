import HTTPTypes

/// The methods the HTTP API's paths take (the paths are ``ServiceRoute``'s): RFC 9110's method rules.
///
/// Every path answers `GET`, `HEAD` (the `GET`'s status and header fields, no body; §9.3.2) and `OPTIONS` (204 with
/// `Allow`; §9.3.7; no CORS). Any other method on a known path is 405 with `Allow` (§15.5.6); a path outside the table
/// is 404, whatever the method.
enum ServiceRoutes {
    /// The `Allow` field's value for every path.
    static let allow = "GET, HEAD, OPTIONS"

    /// Whether `path` (without the query) is one the API serves (``ServiceRoute``).
    static func isKnown(_ path: Substring) -> Bool { ServiceRoute(path: path) != nil }

    /// Whether the method reads a resource the table has: `GET` and `HEAD` go to the routes.
    static func isRead(_ method: HTTPRequest.Method) -> Bool { method == .get || method == .head }
}
