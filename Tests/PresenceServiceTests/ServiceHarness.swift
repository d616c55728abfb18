import Foundation
import Logging
import LoopbackHTTP
import PresenceService
import PresenceStore
import PresenceWire
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

/// Runs blocking socket I/O on a thread of its own: the tests never block the cooperative pool that the
/// in-process service's tasks run on.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// A feeder: a plain TCP client that writes stanza bytes.
final class Feeder: Sendable {
    let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    static func connect(port: Int) async throws -> Feeder {
        try await offPool {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else {
                Glibc.close(descriptor)
                throw TestFailure("cannot connect to the feed port \(port)")
            }
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            return Feeder(descriptor: descriptor)
        }
    }

    func send(_ text: String) async throws { try await send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) async throws {
        let descriptor = self.descriptor
        try await offPool {
            var sent = 0
            while sent < bytes.count {
                let written = bytes[sent...].withUnsafeBytes {
                    Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                guard written > 0 else { throw TestFailure("send failed: \(String(cString: strerror(errno)))") }
                sent += written
            }
        }
    }

    /// Everything the service sends until it closes the connection, and whether it did close it (rather than
    /// the 10 s receive timeout running out).
    func readUntilClosed() async throws -> (text: String, closedByService: Bool) {
        let descriptor = self.descriptor
        return try await offPool {
            var data: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = recv(descriptor, &chunk, chunk.count, 0)
                if count == 0 { return (String(decoding: data, as: UTF8.self), true) }
                if count < 0 { return (String(decoding: data, as: UTF8.self), false) }
                data.append(contentsOf: chunk[..<count])
            }
        }
    }

    func close() { Glibc.close(descriptor) }
}

/// GETs a path from the service's API.
func httpGet(_ path: String, port: Int) async throws -> LoopbackHTTPClient.Response {
    try await offPool { try LoopbackHTTPClient.get(host: "127.0.0.1", port: port, path: path) }
}

/// GETs a path from the service's API and decodes JSON.
func get<T: Decodable & Sendable>(_ type: T.Type, _ path: String, port: Int) async throws -> T {
    let response = try await httpGet(path, port: port)
    guard response.status == 200 else { throw TestFailure("GET \(path): \(response.status)") }
    return try JSONDecoder().decode(T.self, from: Data(response.body))
}

/// Polls `condition` until it holds or `timeout` passes.
func eventually(timeout: Duration = .seconds(10), _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    return try await condition()
}

func state(of jid: String, port: Int) async throws -> PresenceQueryResult? {
    try await get(QueryDocument.self, "/v1/presence/\(jid)", port: port).results.first
}
