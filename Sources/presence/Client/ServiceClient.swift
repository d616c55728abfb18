import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOSSL

/// The CLI's one HTTP client (async-http-client) for `query`, `stats` and `watch --server`: how those commands
/// send a request to a running service, plain or over verified TLS.
///
/// One client for the whole process, as async-http-client advises, made on first use and never shut down (the
/// process ends first). Connections wait at most ``connectTimeout``; a response body may stay silent for at most
/// ``readTimeout``, longer than the service's change-stream heartbeat (15 s), so a dead stream is noticed and a
/// live one never is.
enum ServiceClient {
    static let connectTimeout = TimeAmount.seconds(10)
    static let readTimeout = TimeAmount.seconds(60)

    /// Redirects are answers too: the service sends none, and a balancer's is shown rather than followed. A
    /// refused connection is reported at once, not retried until the connect timeout.
    static let shared: HTTPClient = {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow, timeout: .init(connect: connectTimeout, read: readTimeout))
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    /// A GET of `path` on `server`, with `headers`; TLS for `https://` with `tls` (verified against its trust
    /// roots). The head must arrive within `timeout`; the body is then the caller's to read.
    static func get(
        _ path: String, on server: ServerAddress, headers: [(String, String)], tls: TLSConfiguration?,
        timeout: TimeAmount = .seconds(10)
    ) async throws -> HTTPClientResponse {
        var request = HTTPClientRequest(url: server.url(path))
        request.headers.add(contentsOf: headers)
        request.tlsConfiguration = tls
        return try await shared.execute(request, timeout: timeout)
    }
}
