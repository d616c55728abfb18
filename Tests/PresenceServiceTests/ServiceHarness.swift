import Foundation
import Logging
import PresenceService
import PresenceSource
import PresenceStore
import PresenceTestSupport
import PresenceWire
import ServiceLifecycle
import Testing

/// Runs a service on ephemeral loopback ports for the duration of `body`, then shuts it down gracefully.
func withService(
    storage: any MemoryStorage = DictionaryMemoryStorage(), xmppSource: XMPPPresenceSource? = nil,
    configure: (inout ServiceConfiguration) -> Void = { _ in },
    _ body: @Sendable (PresenceServer.BoundPorts) async throws -> Void
) async throws {
    var configuration = ServiceConfiguration(feedPort: 0, httpPort: 0)
    configure(&configuration)
    var logger = Logger(label: "presence.test")
    logger.logLevel = .critical
    let server = PresenceServer(
        configuration: configuration, storage: storage, xmppSource: xmppSource, logger: logger)
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
/// in-process service's tasks run on. The result crosses back under a lock, so that everything the thread wrote
/// is ordered before the task reads it in a way ThreadSanitizer sees (a continuation resumed from a foreign
/// thread alone was reported as a race on memory the thread had allocated).
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    let handoff = Locked<Result<T, any Error>?>(nil)
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        Thread {
            let result = Result { try body() }
            handoff.withLock { $0 = result }
            continuation.resume()
        }.start()
    }
    return try handoff.withLock { $0! }.get()
}

/// A feeder: a plain TCP client that writes stanza bytes.
final class Feeder: Sendable {
    let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    /// Connects from the test's own task: a loopback connect completes at once, and the feeder is then created
    /// where it is used (only `send` and `readUntilClosed`, which can block, run on a thread of their own).
    static func connect(port: Int) async throws -> Feeder {
        Feeder(descriptor: try LoopbackTCP.connect(port: port))
    }

    func send(_ text: String) async throws { try await send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) async throws {
        let descriptor = self.descriptor
        try await offPool { try bytes.withUnsafeBytes { try LoopbackTCP.sendAll(descriptor, $0) } }
    }

    /// ``readUntilClosed()`` again and again, its texts joined, until the service closes the connection or
    /// `patience` has passed: a debug build beside every other suite can leave a connection silent for longer than
    /// one read's 10 s.
    func readUntilClosed(within patience: Duration) async throws -> (text: String, closedByService: Bool) {
        let deadline = ContinuousClock.now + patience
        var text = ""
        while true {
            let read = try await readUntilClosed()
            text += read.text
            if read.closedByService || ContinuousClock.now >= deadline { return (text, read.closedByService) }
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

    /// What the service sends until `marker` has arrived (or it closes, or 10 s pass).
    func read(until marker: String) async throws -> String {
        let descriptor = self.descriptor
        return try await offPool {
            var data: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while !String(decoding: data, as: UTF8.self).contains(marker) {
                let count = recv(descriptor, &chunk, chunk.count, 0)
                guard count > 0 else { break }
                data.append(contentsOf: chunk[..<count])
            }
            return String(decoding: data, as: UTF8.self)
        }
    }

    func close() { Glibc.close(descriptor) }
}

/// GETs a path from the service's API.
func httpGet(_ path: String, port: Int) async throws -> TestHTTP.Response {
    try await TestHTTP.get(port: port, path: path)
}

/// GETs a path from the service's API and decodes JSON.
func get<T: Decodable & Sendable>(_ type: T.Type, _ path: String, port: Int) async throws -> T {
    let response = try await httpGet(path, port: port)
    guard response.status == 200 else { throw TestFailure("GET \(path): \(response.status)") }
    return try JSONDecoder().decode(T.self, from: Data(response.body))
}

/// Polls `condition` until it holds or `timeout` passes.
func state(of jid: String, port: Int) async throws -> PresenceQueryResult? {
    try await get(QueryDocument.self, "/v1/presence/\(jid)", port: port).results.first
}

/// Feeds alice (available, dnd, a status with a quote and a backslash) and bob (offline), and waits until bob is seen.
func feedAliceAndBob(_ ports: PresenceServer.BoundPorts) async throws {
    let feeder = try await Feeder.connect(port: ports.feed)
    defer { feeder.close() }
    try await feeder.send(
        "<presence from='alice@example.com/desk'><show>dnd</show><status>Quote \" and \\ back</status></presence>"
            + "<presence from='bob@example.com/desk' type='unavailable'/>")
    #expect(try await eventually { try await state(of: "bob@example.com", port: ports.http)?.state == .offline })
}
