import Foundation
import PresenceModel
import PresenceTestSupport
import Testing
import XMPPClient
import XMPPStream

/// The client rate limits Prosody and ejabberd ship hold the watcher back, and the Deploying guide's lines lift
/// them for the watcher: the recipe, checked against the shipped configuration files as installed.
@Suite("The Deploying guide's exemption lifts the shipped rate limit for the watcher", .serialized)
struct ShippedRateLimitTests {
    /// How long the server takes to answer `bytes` of pings, all sent at once by the watcher.
    static func timeToAnswer(_ bytes: Int, on server: any XMPPTestServer) async throws -> Duration {
        let configuration = XMPPClientConfiguration(
            account: try BareJID("watcher@\(server.domain)"), password: "w", resource: "limits", host: "127.0.0.1",
            port: server.port, tls: .off, keepAlive: nil)
        return try await XMPPConnection.withSession(configuration) { session in
            var questions: [UInt8] = []
            var count = 0
            while questions.count < bytes {
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

    /// Sends `bytes` of pings as the watcher to `kind` with the shipped limits, then with the exemption: the
    /// limit's lower bound (the bytes past the burst at its rate) holds whatever the machine's load, and answering
    /// without it takes a fraction of that bound even on a loaded machine.
    @Test(arguments: [(XMPPServerKind.prosody, 150_000, 10_000), (.ejabberd, 60_000, 3_000)])
    func theShippedLimitHoldsTheWatcherBackAndTheGuidesExemptionLiftsIt(
        on kind: XMPPServerKind, bytes: Int, bytesPerSecond: Int
    ) async throws {
        let burst = 20_000
        let bound = Duration.seconds(Double(bytes - burst) / Double(bytesPerSecond))
        let stock = try await kind.start(accounts: ["watcher": "w"], profile: .stock)
        defer { stock.stop() }
        let limited = try await Self.timeToAnswer(bytes, on: stock)
        let exempt = try await kind.start(accounts: ["watcher": "w"], profile: .stockExempting(watcher: "watcher"))
        defer { exempt.stop() }
        let unlimited = try await Self.timeToAnswer(bytes, on: exempt)
        print("\(bytes) bytes of pings on \(kind): \(limited) with the shipped limits, \(unlimited) exempted")
        #expect(limited >= bound * 0.9, "the shipped limit holds the watcher back")
        #expect(unlimited < bound / 2, "the exemption lifts it")
    }
}
