import ArgumentParser
import PresenceService

/// The query API's limits against clients that ask too much or too slowly.
struct HTTPLimitOptions: ParsableArguments {
    @Option(name: .customLong("http-max-batch"), help: "Most JIDs in one GET /v1/presence?jid=... (default 1000).")
    var maxBatchJIDs: Int = HTTPLimits.defaultMaxBatchJIDs

    @Option(
        name: .customLong("http-max-connections"),
        help: "Most HTTP connections at once, change streams included; one more waits to be accepted (default 12288).")
    var maxConnections: Int = HTTPLimits.defaultMaxConnections

    @Option(
        name: .customLong("http-header-timeout"),
        help:
            "Seconds a client may take to send a request's headers, or to ask again on a kept connection (default 30).")
    var headerTimeoutSeconds: Double = HTTPLimits.defaultHeaderTimeout.seconds

    func validate() throws {
        guard maxBatchJIDs >= 1, maxConnections >= 1 else {
            throw ValidationError("--http-max-batch and --http-max-connections must be at least 1")
        }
        guard headerTimeoutSeconds.isFinite, headerTimeoutSeconds >= 0.1, headerTimeoutSeconds <= 86_400 else {
            throw ValidationError("--http-header-timeout must be between 0.1 and 86400 seconds")
        }
    }

    var limits: HTTPLimits {
        HTTPLimits(
            maxBatchJIDs: maxBatchJIDs, maxConnections: maxConnections,
            headerTimeout: .milliseconds(Int64(headerTimeoutSeconds * 1000)))
    }
}
