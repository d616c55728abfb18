import Foundation
import PresenceService
import Testing

@Suite("presence serve, query --server and stats --server, end to end", .serialized)
struct ServeCommandTests {
    /// A loopback socket bound to an ephemeral port (listening when asked), and that port.
    static func boundSocket(listening: Bool) -> (descriptor: Int32, port: Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
                bind(descriptor, pointer, length)
                if listening { listen(descriptor, 1) }
                return getsockname(descriptor, pointer, &length)
            }
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// A port nobody listens on right now.
    static func freePort() -> Int {
        let (descriptor, port) = boundSocket(listening: false)
        close(descriptor)
        return port
    }

    static func send(_ text: String, toPort port: Int) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw CocoaError(.fileReadUnknown) }
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    @Test func aServedStreamIsQueryableFromTheCLIAndSIGTERMExitsCleanly() async throws {
        let feedPort = ServeCommandTests.freePort()
        let httpPort = ServeCommandTests.freePort()
        let server = Process()
        server.executableURL = CLI.binary
        server.arguments = ["serve", "--feed", "127.0.0.1:\(feedPort)", "--http", "127.0.0.1:\(httpPort)", "--log-level", "error"]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer { if server.isRunning { server.terminate() } }
        var healthy = false
        for _ in 0 ..< 200 where !healthy {
            healthy = (try? LoopbackHTTPClient.get(host: "127.0.0.1", port: httpPort, path: "/healthz").status) == 200
            if !healthy { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(healthy)
        try ServeCommandTests.send("<presence from='alice@example.com/desk'><show>away</show><status>Lunch</status></presence>", toPort: feedPort)
        var result = try CLI.run(["query", "--server", "http://127.0.0.1:\(httpPort)", "--format", "json", "alice@example.com", "bob@example.com"])
        for _ in 0 ..< 100 where !result.stdout.contains("\"available\"") {
            try await Task.sleep(for: .milliseconds(50))
            result = try CLI.run(["query", "--server", "http://127.0.0.1:\(httpPort)", "--format", "json", "alice@example.com", "bob@example.com"])
        }
        #expect(result.status == 0, "\(result.stderr)")
        let results = try #require(result.json?["results"] as? [[String: Any]])
        #expect(results.map { $0["state"] as? String } == ["available", "unknown"])
        #expect(results[0]["status"] as? String == "Lunch")
        let stats = try CLI.run(["stats", "--server", "http://127.0.0.1:\(httpPort)", "--format", "json"])
        #expect(stats.status == 0)
        #expect(stats.json?["updatesApplied"] as? Int == 1)
        #expect(stats.json?["storage"] as? String == "dictionary")
        let text = try CLI.run(["stats", "--server", "http://127.0.0.1:\(httpPort)"])
        #expect(text.stdout.contains("updates applied"))
        server.terminate()  // SIGTERM
        server.waitUntilExit()
        #expect(server.terminationStatus == 0)
    }

    @Test func serveRefusesNonLoopbackAddressesWithoutTheFlag() throws {
        let result = try CLI.run(["serve", "--http", "0.0.0.0:8080"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--allow-remote"))
    }

    @Test func aServerThatIsNotThereIsAClearError() throws {
        let result = try CLI.run(["stats", "--server", "http://127.0.0.1:\(ServeCommandTests.freePort())"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("cannot reach the service"))
    }
}

@Suite("presence serve fails cleanly")
struct ServeFailureTests {
    @Test func aPortInUseEndsTheServiceWithAnErrorInsteadOfHanging() throws {
        let (descriptor, busy) = ServeCommandTests.boundSocket(listening: true)
        defer { close(descriptor) }
        let started = Date()
        let result = try CLI.run(["serve", "--feed", "127.0.0.1:\(busy)", "--http", "127.0.0.1:\(ServeCommandTests.freePort())", "--log-level", "critical"])
        #expect(result.status != 0)
        #expect(Date().timeIntervalSince(started) < 20)
    }
}
