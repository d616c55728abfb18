import AsyncHTTPClient
import Foundation
import NIOCore
import ServerSentEvents

/// The loads' HTTP client for everything but the measured query traffic (``KeepAliveClient``): statistics, setup
/// calls to a server's API, and change streams, through async-http-client.
///
/// One client for the process, never shut down (the process ends first), with room for as many connections to
/// one service as a load opens (each change stream holds one) and no retry of a refused connection.
public enum LoadHTTP {
    /// A whole response: its status and body.
    public struct Response: Sendable {
        public var status: Int
        public var body: [UInt8]
    }

    public static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow, timeout: .init(connect: .seconds(10), read: .seconds(60)))
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 4096
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    /// `GET path` from `127.0.0.1:port` on a fresh connection (`Connection: close`), blocking the calling thread
    /// (a load's own thread, never an event loop) until the whole response is in, `timeout` at the most.
    public static func get(port: Int, path: String, timeout: Duration = .seconds(10)) throws -> Response {
        let request = try HTTPClient.Request(
            url: "http://127.0.0.1:\(port)\(path)", headers: ["Connection": "close"])
        let response = try client.execute(request: request, deadline: .now() + TimeAmount(timeout)).wait()
        return Response(status: Int(response.status.code), body: response.body.map { Array(buffer: $0) } ?? [])
    }

    /// Opens the change stream at `path` (with `Last-Event-ID` when given): the status, and the events as they
    /// come. The stream closes when the task reading it is cancelled or the sequence is released.
    public static func events(
        port: Int, path: String, lastEventID: String? = nil
    ) async throws -> (status: Int, events: ServerSentEventSequence<HTTPClientResponse.Body>) {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.headers.add(name: "Accept", value: "text/event-stream")
        if let lastEventID { request.headers.add(name: "Last-Event-ID", value: lastEventID) }
        let response = try await client.execute(request, timeout: .seconds(60))
        return (Int(response.status.code), response.body.serverSentEvents)
    }
}
