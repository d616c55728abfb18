import Foundation
import LoopbackHTTP
import PresenceModel
import PresenceService
import PresenceStore
import PresenceTestSupport
import PresenceWire
import PresenceWorkload
import Testing

/// Feeders that misbehave (one stops in the middle of a stanza, one sends as fast as it can) while others feed and
/// clients query: the misbehaving one is dealt with and nobody else notices.
@Suite("Feeder faults", .serialized)
struct FeedFaultTests {
    @Test func aFeederThatStallsMidStanzaIsClosedByTheIdleTimeoutAndTheOthersCarryOn() async throws {
        try await withService(configure: { $0.idleTimeout = .seconds(2) }) { ports in
            let stalled = try await Feeder.connect(port: ports.feed)
            defer { stalled.close() }
            try await stalled.send(
                "<presence from='before@example.com/desk'><status>complete</status></presence>"
                    + "<presence from='half@example.com/desk'><status>never fini")
            let steady = try await Feeder.connect(port: ports.feed)
            defer { steady.close() }
            async let stalledEnd = stalled.readUntilClosed()
            // The steady feeder sends every 100 ms for 6 s, three times the idle timeout, from a thread of its own:
            // under ThreadSanitizer with every suite running, the test's tasks can wait seconds for a thread.
            let rounds = 60
            let descriptor = steady.descriptor
            try await offPool {
                for round in 1 ... rounds {
                    let stanza = "<presence from='steady@example.com/desk'><status>round \(round)</status></presence>"
                    try Array(stanza.utf8).withUnsafeBytes { try LoopbackTCP.sendAll(descriptor, $0) }
                    Thread.sleep(forTimeInterval: 0.1)
                }
            }
            #expect(try await stalledEnd.closedByService, "the service closes the stalled feeder")
            #expect(try await state(of: "before@example.com", port: ports.http)?.status == "complete")
            #expect(
                try await state(of: "half@example.com", port: ports.http)?.state == .unknown,
                "half a stanza is never applied")
            #expect(
                try await eventually {
                    try await state(of: "steady@example.com", port: ports.http)?.status == "round \(rounds)"
                })
            let stats = try await get(ServiceStats.self, "/v1/stats", port: ports.http)
            #expect(stats.feedersConnected == 1, "the steady feeder is still connected")
            #expect(stats.updatesApplied == 1 + rounds)
        }
    }

    @Test func queriesAreAnsweredCorrectlyWhileAFeederSendsAsFastAsItCan() async throws {
        // People the flood never touches, with a status each that the queries must see.
        let known = (0 ..< 100).map { "known\($0)@example.com" }
        // The stanzas of a generated stream without its header and footer, so that they can be sent again and again.
        var generator = PresenceStreamGenerator(.init(users: 5_000, updates: 20_000, seed: 7))
        let stream = String(decoding: generator.generate(), as: UTF8.self)
        let stanzas = stream.dropFirst(PresenceStreamGenerator.header.count)
            .dropLast(PresenceStreamGenerator.footer.count)
        let flood = Array(stanzas.replacingOccurrences(of: "@", with: "-flood@").utf8)
        try await withService { ports in
            let setup = try await Feeder.connect(port: ports.feed)
            try await setup.send(
                known.map { "<presence from='\($0)/desk'><status>I am \($0)</status></presence>" }.joined())
            setup.close()
            #expect(
                try await eventually {
                    try await get(ServiceStats.self, "/v1/stats", port: ports.http).updatesApplied == known.count
                })

            // The flood: one connection, the same stream again and again, as fast as the service takes it.
            let flooding = Locked(true)
            let floodConnection = try await Feeder.connect(port: ports.feed)
            let floodTask = Task {
                try await offPool {
                    while flooding.withLock({ $0 }) {
                        try flood.withUnsafeBytes { try LoopbackTCP.sendAll(floodConnection.descriptor, $0) }
                    }
                }
            }
            #expect(
                try await eventually(timeout: .seconds(60)) {
                    try await get(ServiceStats.self, "/v1/stats", port: ports.http).updatesApplied > known.count + 1_000
                }, "the flood is under way")
            let appliedBefore = try await get(ServiceStats.self, "/v1/stats", port: ports.http).updatesApplied

            let wrong = try await withThrowingTaskGroup(of: Int.self) { group in
                for client in 0 ..< 4 {
                    group.addTask {
                        var wrong = 0
                        for round in 0 ..< 50 {
                            let jid = known[(client * 50 + round * 7) % known.count]
                            let answer = try await state(of: jid, port: ports.http)
                            if answer?.state != .available || answer?.status != "I am \(jid)" { wrong += 1 }
                        }
                        return wrong
                    }
                }
                return try await group.reduce(0, +)
            }
            let appliedAfter = try await get(ServiceStats.self, "/v1/stats", port: ports.http).updatesApplied
            flooding.withLock { $0 = false }
            shutdown(floodConnection.descriptor, Int32(SHUT_RDWR))
            _ = await floodTask.result
            floodConnection.close()

            #expect(wrong == 0, "every one of 200 answers during the flood is right")
            #expect(appliedAfter > appliedBefore, "the flood was being applied while the queries were answered")
        }
    }
}
