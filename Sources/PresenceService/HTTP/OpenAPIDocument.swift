/// The API's OpenAPI document as this deployment serves it at `/openapi.yaml`, so that what it says about tokens is
/// what this service does.
///
/// The repository's `openapi.yaml` (embedded in the binary) describes a service that requires tokens, with
/// `/metrics` among the paths that need one. A service without tokens serves it with `security: []` at the top
/// (nothing needs a token); one with `--metrics-open`, with `security: []` on `/metrics`.
enum OpenAPIDocument {
    /// The document as the repository has it.
    static let repository = String(decoding: PackageResources.openapi_yaml, as: UTF8.self)

    private static let required = "\nsecurity:\n  - bearerToken: []\n  - tokenCookie: []\n"
    private static let metrics = "\n  /metrics:\n    get:\n"

    private static let open = Array(repository.replacingOccurrences(of: required, with: "\nsecurity: []\n").utf8)
    private static let metricsOpen = Array(
        repository.replacingOccurrences(of: metrics, with: metrics + "      security: []\n").utf8)
    private static let closed = Array(repository.utf8)

    /// The document for a service with this access.
    static func bytes(for access: APIAccess) -> [UInt8] {
        guard access.requiresToken else { return open }
        return access.metricsOpen ? metricsOpen : closed
    }

    /// Whether the rewrites find what they rewrite: the document's top-level `security` and its `/metrics`.
    static var rewritesApply: Bool { repository.contains(required) && repository.contains(metrics) }
}
