import Foundation
import PresenceModel
import PresenceTestSupport
import Testing
import XMPPClient
import XMPPStream

/// The client rate limits Prosody and ejabberd ship hold the watcher back, and the Deploying guide's lines lift
/// them for the watcher: the recipe, checked against the shipped configuration files as installed.
@Suite("The Deploying guide's exemption lifts the shipped rate limit for the watcher", .realServers)
struct ShippedRateLimitTests {
    /// How long the server itself took to read `bytes` of XEP-0202 entity-time questions sent at once by the
    /// watcher: from its clock in the first answer to its clock in the last (whole seconds on Prosody), so a test
    /// process slowed by a loaded machine, which reads the answers late, does not count.
    static func serverReadTime(_ bytes: Int, on server: any XMPPTestServer) async throws -> Duration {
        let configuration = XMPPClientConfiguration(
            account: try BareJID("watcher@\(server.domain)"), password: "w", resource: "limits", host: "127.0.0.1",
            port: server.port, tls: .off, keepAlive: nil)
        return try await XMPPConnection.withSession(configuration) { session in
            var questions: [UInt8] = []
            var count = 0
            while questions.count < bytes {
                count += 1
                var writer = XMPPWriter()
                writer.iq(type: "get", id: "t\(count)", to: server.domain) { $0.element("time", namespace: "urn:xmpp:time") }
                questions += writer.bytes
            }
            try await session.send(questions)
            var first: PresenceTime?
            var last: PresenceTime?
            var answered = 0
            while answered < count, let stanza = try await session.next() {
                guard let iq = IQ(stanza), iq.id.hasPrefix("t") else { continue }
                answered += 1
                let time = stanza.firstChild(of: stanza.root, named: "time", in: "urn:xmpp:time")
                let utc = time.flatMap { stanza.firstChild(of: $0, named: "utc", in: "urn:xmpp:time") }
                let stamp = try #require(utc.flatMap { PresenceTime(xmppTimestamp: stanza.text(of: $0)) }, "\(iq)")
                first = first ?? stamp
                last = stamp
            }
            let span = (last?.millisecondsSinceEpoch ?? 0) - (first?.millisecondsSinceEpoch ?? 0)
            return .milliseconds(span)
        }
    }

    /// Sends `bytes` of questions as the watcher to `kind` with the shipped limits, then with the exemption. With
    /// the limit, the server cannot read them faster than its rate allows past its burst (20,000 bytes): the
    /// lower bound. Without it, it reads them in a fraction of that time (a second or two on an idle machine).
    @Test(arguments: [(XMPPServerKind.prosody, 150_000, 10_000), (.ejabberd, 60_000, 3_000)])
    func theShippedLimitHoldsTheWatcherBackAndTheGuidesExemptionLiftsIt(
        on kind: XMPPServerKind, bytes: Int, bytesPerSecond: Int
    ) async throws {
        let burst = 20_000
        let bound = Duration.seconds(Double(bytes - burst) / Double(bytesPerSecond))
        let stock = try await kind.start(accounts: ["watcher": "w"], profile: .stock)
        defer { stock.stop() }
        let limited = try await Self.serverReadTime(bytes, on: stock)
        let exempt = try await kind.start(accounts: ["watcher": "w"], profile: .stockExempting(watcher: "watcher"))
        defer { exempt.stop() }
        let unlimited = try await Self.serverReadTime(bytes, on: exempt)
        print("\(bytes) bytes of questions on \(kind): read in \(limited) with the shipped limits, \(unlimited) exempted")
        #expect(limited >= bound * 0.8, "the shipped limit holds the watcher back")
        // Against the same server's read time with the limit, not against a wall-clock figure: a loaded machine
        // slows both reads, and only the limit holds the first back by the rate.
        #expect(unlimited < limited / 2, "the exemption lifts it")
    }

    @Test func aLookupStormOnProsodysShippedLimitIsNamedAsTheSnapshotsIs() async throws {
        let people = (0 ..< 400).map { String(format: "p%03d", $0) }
        var accounts = Dictionary(uniqueKeysWithValues: people.map { ($0, Organisation.password) })
        accounts["watcher"] = Organisation.password
        let server = try await XMPPServerKind.prosody.start(
            accounts: accounts, groups: ["Staff": ["watcher"] + people], profile: .stock)
        let organisation = try Organisation(server: server)
        defer { organisation.stop() }
        organisation.startWatching()
        #expect(try await organisation.snapshotComplete())
        #expect(organisation.source.status.readLimit == nil, "the snapshot asks Prosody nothing but probes")

        // 800 probes a second, four times the default --probe-rate: over 40 kB a second, well past the 10 kB the
        // limit reads however late a loaded machine runs the loop.
        let members = people.map { organisation.bare($0) }
        let source = organisation.source
        let storm = Task {
            var index = 0
            while !Task.isCancelled {
                let batch = Set((0 ..< 80).map { members[(index + $0) % members.count] })
                index += 80
                Task { _ = try? await source.probe(batch, timeout: .seconds(2)) }
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        defer { storm.cancel() }
        let named = try await eventually(timeout: TestDeadline.condition) {
            source.status.readLimit?.likelySetting?.contains("mod_limits") == true
        }
        #expect(named, "\(String(describing: source.status.readLimit))")
    }
}
