import Foundation
import PresenceTestSupport
import Synchronization
import Testing

/// `presence serve --data-dir`, as a process: restarts, crashes and a second process on the same directory.
@Suite("presence serve keeps statuses on disk across restarts and crashes", .realServers)
struct ServeDiskTierTests {
    private static func json(_ port: Int, _ path: String) async throws -> [String: Any] {
        let response = try await TestHTTP.get(port: port, path: path)
        return try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] ?? [:]
    }

    private static func results(_ port: Int, _ users: Range<Int>) async throws -> [[String: Any]] {
        let query = users.map { "jid=u\($0)@example.com" }.joined(separator: "&")
        return try await json(port, "/v1/presence?" + query)["results"] as? [[String: Any]] ?? []
    }

    private static func disk(_ port: Int) async throws -> [String: Any] {
        try await json(port, "/v1/stats")["disk"] as? [String: Any] ?? [:]
    }

    /// Waits until `condition` holds, polling; false after 120 s. The subject is what a restart keeps, not how fast
    /// the disk is: with the whole suite beside it, a disk tier that writes through an LRU of 10 can take tens of
    /// seconds over 200 users.
    private static func waitUntil(_ condition: () async throws -> Bool) async rethrows -> Bool {
        let deadline = ContinuousClock.now + TestDeadline.serverCycle
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    private static func presences(_ users: Range<Int>, round: Int) -> String {
        users.map { "<presence from='u\($0)@example.com/desk'><show>away</show><status>round \(round)</status></presence>" }
            .joined()
    }

    private static func directory() -> String { NSTemporaryDirectory() + "presence-serve-disk-\(UUID().uuidString)" }

    @Test func aRestartedServiceAnswersEveryStatusAsOfItsLastWriteUntilItChanges() async throws {
        let data = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: data) }
        let arguments = ["--data-dir", data, "--storage", "lru", "--count-limit", "10"]
        do {
            let server = try RunningServer(arguments)
            try ServeCommandTests.send(Self.presences(0 ..< 200, round: 1), toPort: server.feedPort)
            #expect(try await Self.waitUntil { try await Self.json(server.httpPort, "/v1/stats")["updatesApplied"] as? Int == 200 })
            #expect(try await Self.waitUntil { try await Self.disk(server.httpPort)["diskUsers"] as? Int == 200 }, "flushed")
            let before = try await Self.results(server.httpPort, 0 ..< 200)
            #expect(before.allSatisfy { $0["state"] as? String == "available" && $0["asOf"] is NSNull })
            #expect(before.contains { $0["origin"] as? String == "disk" }, "an LRU of 10 reads most users from disk")
            #expect(server.stop() == 0)
        }
        let server = try RunningServer(arguments)
        #expect(server.log.contains("restored=200"), "\(server.log)")
        let after = try await Self.results(server.httpPort, 0 ..< 200)
        #expect(after.count == 200)
        for result in after {
            #expect(result["state"] as? String == "available", "\(result)")
            #expect(result["status"] as? String == "round 1", "\(result)")
            #expect(result["asOf"] as? String != nil && result["live"] as? Bool == false, "restored: \(result)")
        }
        #expect(try await Self.disk(server.httpPort)["restoredUsers"] as? Int == 200)
        try ServeCommandTests.send(Self.presences(7 ..< 8, round: 2), toPort: server.feedPort)
        #expect(
            try await Self.waitUntil {
                let seven = try await Self.results(server.httpPort, 7 ..< 8).first ?? [:]
                return seven["status"] as? String == "round 2" && seven["asOf"] is NSNull
            }, "a status updated since the restart is current")

        let second = try await CLI.run(
            ["serve", "--feed", "127.0.0.1:0", "--http", "127.0.0.1:0", "--data-dir", data], timeout: TestDeadline.processExit)
        #expect(second.status == 74, "one process per data directory")
        #expect(second.stderr.contains("in use by another presence process"), "\(second.stderr)")
        #expect(server.stop() == 0)
    }

    @Test func afterKill9EveryStatusIsOneTheUserHadAndNothingBeforeTheLastFlushIsLost() async throws {
        let data = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: data) }
        let arguments = ["--data-dir", data, "--disk-flush-interval", "20"]
        let users = 0 ..< 300
        let server = try RunningServer(arguments)
        try ServeCommandTests.send(Self.presences(users, round: 1), toPort: server.feedPort)
        #expect(
            try await Self.waitUntil {
                let disk = try await Self.disk(server.httpPort)
                return disk["diskUsers"] as? Int == users.count && disk["dirtyUsers"] as? Int == 0
            }, "round 1 is on disk")
        // Flat out, round after round, until the service dies under the feeder.
        let sent = SentRound()
        let feedPort = server.feedPort
        let feeder = Thread {
            guard let descriptor = try? LoopbackTCP.connect(port: feedPort) else { return }
            defer { close(descriptor) }
            for round in 2 ..< 100_000 {
                sent.value.withLock { $0 = round }
                let bytes = Array(Self.presences(users, round: round).utf8)
                guard (try? bytes.withUnsafeBytes({ try LoopbackTCP.sendAll(descriptor, $0) })) != nil else { return }
            }
        }
        feeder.start()
        #expect(await Self.waitUntil { sent.value.withLock { $0 } > 20 })
        server.crash()
        let lastSent = sent.value.withLock { $0 }

        let restarted = try RunningServer(arguments)
        let restored = try await Self.results(restarted.httpPort, users)
        #expect(restored.count == users.count)
        for result in restored {
            let status = result["status"] as? String ?? ""
            let round = Int(status.dropFirst("round ".count)) ?? 0
            #expect(status.hasPrefix("round ") && (1 ... lastSent).contains(round), "a status really sent: \(result)")
            #expect(result["show"] as? String == "away", "\(result)")
        }
        #expect(restarted.stop() == 0)
    }
}

/// The round the feeder thread has sent, read by the test.
private final class SentRound: Sendable {
    let value = Mutex(1)
}
