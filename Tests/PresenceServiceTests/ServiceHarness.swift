import Foundation
import Logging
import PresenceService
import PresenceStore
import ServiceLifecycle

/// Runs a service on ephemeral loopback ports for the duration of `body`, then shuts it down gracefully.
func withService(
    storage: any MemoryStorage = DictionaryMemoryStorage(),
    configure: (inout ServiceConfiguration) -> Void = { _ in },
    _ body: @Sendable (PresenceServer.BoundPorts) async throws -> Void
) async throws {
    var configuration = ServiceConfiguration(feedPort: 0, httpPort: 0)
    configure(&configuration)
    var logger = Logger(label: "presence.test")
    logger.logLevel = .critical
    let server = PresenceServer(configuration: configuration, storage: storage, logger: logger)
    let (ready, continuation) = AsyncStream.makeStream(of: (PresenceServer.BoundPorts, ServiceGroup).self)
    try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await server.run(signals: []) { ports, group in continuation.yield((ports, group)) } }
        var iterator = ready.makeAsyncIterator()
        guard let (ports, group) = await iterator.next() else { throw TestFailure("the service did not start") }
        do {
            try await body(ports)
        } catch {
            await group.triggerGracefulShutdown()
            throw error
        }
        await group.triggerGracefulShutdown()
        try await tasks.waitForAll()
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A feeder: a plain TCP client that writes stanza bytes.
final class Feeder: @unchecked Sendable {
    // @unchecked: used by one test task at a time; the descriptor is only closed once.
    let descriptor: Int32

    init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw TestFailure("cannot connect to the feed port \(port)") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let written = bytes[sent...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { throw TestFailure("send failed: \(String(cString: strerror(errno)))") }
            sent += written
        }
    }

    /// Everything the service sends until it closes the connection (or the 10 s timeout).
    func readUntilClosed() -> String {
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &chunk, chunk.count, 0)
            guard count > 0 else { break }
            data.append(contentsOf: chunk[..<count])
        }
        return String(decoding: data, as: UTF8.self)
    }

    func close() { Glibc.close(descriptor) }
}

/// GETs a path from the service's API and decodes JSON.
func get<T: Decodable>(_ type: T.Type, _ path: String, port: Int) throws -> T {
    let response = try LoopbackHTTPClient.get(host: "127.0.0.1", port: port, path: path)
    guard response.status == 200 else { throw TestFailure("GET \(path): \(response.status)") }
    return try JSONDecoder().decode(T.self, from: Data(response.body))
}

/// Polls `condition` until it holds or `timeout` passes.
func eventually(timeout: Duration = .seconds(10), _ condition: () throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    return try condition()
}

func state(of jid: String, port: Int) throws -> PresenceQueryResult? {
    try get(PresenceResults.self, "/v1/presence/\(jid)", port: port).results.first
}
