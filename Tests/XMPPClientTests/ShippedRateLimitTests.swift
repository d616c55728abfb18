import PresenceModel
import PresenceTestSupport
import Testing
import XMPPClient
import XMPPStream

/// The client rate limits Prosody and ejabberd ship hold the watcher back, and the Deploying guide's lines lift
/// them for the watcher: the recipe, checked against the shipped configuration files as installed.
@Suite("The Deploying guide's exemption lifts the shipped rate limit for the watcher", .serialized)
struct ShippedRateLimitTests {
    /// Bytes of questions sent at once: well past either server's burst (20,000 bytes).
    static let questionBytes = 60_000

    /// How long the server takes to answer pings worth `questionBytes`, all sent at once by the watcher.
    static func timeToAnswer(on server: any XMPPTestServer) async throws -> Duration {
        let configuration = XMPPClientConfiguration(
            account: try BareJID("watcher@\(server.domain)"), password: "w", resource: "limits", host: "127.0.0.1",
            port: server.port, tls: .off, keepAlive: nil)
        return try await XMPPConnection.withSession(configuration) { session in
            var questions: [UInt8] = []
            var count = 0
            while questions.count < questionBytes {
                count += 1
                questions += IQ.ping(id: "p\(count)")
            }
            let started = ContinuousClock.now
            try await session.send(questions)
            var answered = 0
            while answered < count, let stanza = try await session.next() {
                if let iq = IQ(stanza), iq.id.hasPrefix("p") { answered += 1 }
            }
            return ContinuousClock.now - started
        }
    }

    @Test(arguments: XMPPServerKind.allCases)
    func theShippedLimitHoldsTheWatcherBackAndTheGuidesExemptionLiftsIt(on kind: XMPPServerKind) async throws {
        let stock = try await kind.start(accounts: ["watcher": "w"], profile: .stock)
        let limited = try await Self.timeToAnswer(on: stock)
        stock.stop()
        let exempt = try await kind.start(accounts: ["watcher": "w"], profile: .stockExempting(watcher: "watcher"))
        let unlimited = try await Self.timeToAnswer(on: exempt)
        exempt.stop()
        print("\(Self.questionBytes) bytes of pings on \(kind): \(limited) with the shipped limits, \(unlimited) exempted")
        // 40,000 bytes past the burst at 10,000 (Prosody) or 3,000 (ejabberd) bytes a second.
        #expect(limited >= .seconds(2), "the shipped limit holds the watcher back")
        #expect(unlimited * 4 < limited, "the exemption lifts it")
    }
}
