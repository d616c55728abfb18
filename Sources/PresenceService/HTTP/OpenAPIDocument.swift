/// The API's OpenAPI document as this deployment serves it at `/openapi.yaml`, so that what it says about tokens and
/// limits is what this service does.
///
/// The repository's `openapi.yaml` (embedded in the binary) describes a service with the default limits that
/// requires tokens, with `/metrics` among the paths that need one. The served document has this service's
/// `--http-max-batch` and `--events-max-jids` as the `maxItems` of their `jid` lists; without tokens it has
/// `security: []` at the top (nothing needs a token), and with `--metrics-open`, `security: []` on `/metrics`.
struct OpenAPIDocument: Sendable {
    /// The document as served.
    let bytes: [UInt8]

    /// The document as the repository has it.
    static let repository = String(decoding: PackageResources.openapi_yaml, as: UTF8.self)

    static let tokensRequired = "\nsecurity:\n  - bearerToken: []\n  - tokenCookie: []\n"
    static let metrics = "\n  /metrics:\n    get:\n"
    static let batchLimit = "maxItems: \(HTTPLimits.defaultMaxBatchJIDs) # --http-max-batch\n"
    static let streamLimit = "maxItems: \(EventStreamConfiguration.defaultMaxJIDsPerStream) # --events-max-jids\n"

    init(access: APIAccess, maxBatchJIDs: Int, maxJIDsPerStream: Int) {
        var text = OpenAPIDocument.repository
            .replacingOccurrences(of: Self.batchLimit, with: "maxItems: \(maxBatchJIDs) # --http-max-batch\n")
            .replacingOccurrences(of: Self.streamLimit, with: "maxItems: \(maxJIDsPerStream) # --events-max-jids\n")
        if !access.requiresToken {
            text = text.replacingOccurrences(of: Self.tokensRequired, with: "\nsecurity: []\n")
        } else if access.metricsOpen {
            text = text.replacingOccurrences(of: Self.metrics, with: Self.metrics + "      security: []\n")
        }
        bytes = Array(text.utf8)
    }

    /// Whether every rewrite finds what it rewrites in the repository's document.
    static var rewritesApply: Bool {
        [tokensRequired, metrics, batchLimit, streamLimit].allSatisfy { repository.contains($0) }
    }
}
