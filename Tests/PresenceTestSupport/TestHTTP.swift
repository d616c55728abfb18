import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import PresenceModel

/// The tests' HTTP client: async-http-client with what the tests ask of a service (a GET, ejabberd's API POST,
/// a change stream in ``TestEventStream``), so that a test file names a path and reads a status.
///
/// One client for each read timeout a test asks for (30 s for a GET, 60 s for a stream unless the test says
/// otherwise: async-http-client sets it per client), shared by the whole test process and never shut down (the
/// process ends first). Every request says
/// `Connection: close`: each exchange is on a connection of its own, as a test that counts connections or swaps
/// a certificate expects, and no kept-alive connection outlives the service a test stopped. Redirects are
/// returned, not followed.
package enum TestHTTP {
    /// A whole response: its status, headers (names lowercased; a repeated header keeps its last value) and body.
    package struct Response: Sendable {
        package var status: Int
        package var headers: [String: String]
        package var body: [UInt8]
    }

    private static let clients = Locked<[Duration: HTTPClient]>([:])

    /// The client whose reads wait at most `readTimeout` for the next bytes.
    static func client(readTimeout: Duration) -> HTTPClient {
        clients.withLock { clients in
            if let client = clients[readTimeout] { return client }
            var configuration = HTTPClient.Configuration(
                redirectConfiguration: .disallow,
                timeout: .init(connect: TimeAmount(TestDeadline.read), read: TimeAmount(readTimeout)))
            // As many connections to one service as the tests open (a stream holds one for as long as it lasts),
            // and a refused connection fails at once, as the tests of a service that is down expect.
            configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 1024
            configuration.connectionPool.retryConnectionEstablishment = false
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            clients[readTimeout] = client
            return client
        }
    }

    /// `GET path` (with its query) from `host:port`, over TLS when `transport` says so; the head must come
    /// within `timeout`, and no read of the body may wait longer.
    package static func get(
        host: String = "127.0.0.1", port: Int, path: String, headers: [String: String] = [:],
        transport: TestTransport = .plain, timeout: Duration = TestDeadline.read
    ) async throws -> Response {
        let response = try await start(
            host: host, port: port, path: path, headers: headers, transport: transport, timeout: timeout)
        return Response(
            status: Int(response.status.code), headers: lowercased(response.headers),
            body: Array(buffer: try await response.body.collect(upTo: 64 << 20)))
    }

    /// Sends a GET and returns as soon as the head is in (within `timeout`): the body is the caller's to stream,
    /// each read waiting at most `timeout`.
    static func start(
        host: String, port: Int, path: String, headers: [String: String], transport: TestTransport,
        timeout: Duration
    ) async throws -> HTTPClientResponse {
        var request = HTTPClientRequest(url: url(host: host, port: port, path: path, secure: transport.tls != nil))
        request.headers.add(contentsOf: headers.sorted { $0.key < $1.key })
        request.headers.replaceOrAdd(name: "Connection", value: "close")
        request.tlsConfiguration = transport.tls
        return try await client(readTimeout: timeout).execute(request, timeout: TimeAmount(timeout))
    }

    /// `POST path` of `json` to `127.0.0.1:port`, blocking: for fixtures that set a server up from a thread of
    /// their own. The status and the body.
    package static func post(port: Int, path: String, json: String) throws -> (status: Int, body: String) {
        let headers = HTTPHeaders([("Content-Type", "application/json"), ("Connection", "close")])
        let request = try HTTPClient.Request(
            url: url(host: "127.0.0.1", port: port, path: path, secure: false), method: .POST, headers: headers,
            body: .string(json))
        let response = try client(readTimeout: TestDeadline.read).execute(
            request: request, deadline: .now() + TimeAmount(TestDeadline.read)
        ).wait()
        return (Int(response.status.code), response.body.map { String(buffer: $0) } ?? "")
    }

    static func lowercased(_ headers: HTTPHeaders) -> [String: String] {
        Dictionary(headers.map { ($0.name.lowercased(), $0.value) }) { $1 }
    }

    private static func url(host: String, port: Int, path: String, secure: Bool) -> String {
        "\(secure ? "https" : "http")://\(host.contains(":") ? "[\(host)]" : host):\(port)\(path)"
    }
}

/// How ``TestHTTP`` reaches a service: plain HTTP, or TLS that verifies the certificate against the system's
/// trust roots or only `caFile`'s certificates.
package struct TestTransport: Sendable {
    /// The TLS configuration of an `https://` request; nil for plain HTTP.
    package let tls: TLSConfiguration?

    package static let plain = TestTransport(tls: nil)

    init(tls: TLSConfiguration?) { self.tls = tls }

    package init(tls: Bool, caFile: String? = nil) {
        guard tls else {
            self.init(tls: nil)
            return
        }
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let caFile { configuration.trustRoots = .file(caFile) }
        self.init(tls: configuration)
    }
}
