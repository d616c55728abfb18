import Crypto
import Foundation
import PresenceService
import PresenceTestSupport
import PresenceWire
import Testing

@Suite("The feed port's component handshake (XEP-0114): only feeders that prove the secret are applied")
struct FeedHandshakeTests {
    static let secret = "s3cret shared with the feeders"
    static let header =
        "<stream:stream xmlns='jabber:component:accept' xmlns:stream='http://etherx.jabber.org/streams' to='feed.example.com'>"

    /// Opens a component stream and returns the stream id the service gave.
    static func open(_ feeder: Feeder) async throws -> String {
        try await feeder.send(header)
        let answer = try await feeder.read(until: ">")
        #expect(answer.contains("xmlns='jabber:component:accept'") && answer.contains("from='feed.example.com'"))
        let id = try #require(answer.firstRange(of: "id='").map { answer[$0.upperBound...].prefix { $0 != "'" } })
        return String(id)
    }

    static func handshake(id: String, secret: String) -> String {
        Insecure.SHA1.hash(data: Array((id + secret).utf8)).map { String(format: "%02x", $0) }.joined()
    }

    @Test func aFeederThatProvesTheSecretIsAppliedFromThenOn() async throws {
        try await withService(configure: { $0.feedSecret = FeedSecret(Array(Self.secret.utf8)) }) { ports in
            let feeder = try await Feeder.connect(port: ports.feed)
            defer { feeder.close() }
            let id = try await Self.open(feeder)
            #expect(id.count >= 16, "a random stream id")
            try await feeder.send(
                "<handshake>\(Self.handshake(id: id, secret: Self.secret).uppercased())</handshake>"
                    + "<presence from='alice@example.com/desk'><show>away</show></presence>")
            #expect(try await feeder.read(until: "<handshake/>").contains("<handshake/>"))
            #expect(try await eventually { try await state(of: "alice@example.com", port: ports.http)?.show == .away })
        }
    }

    @Test func aWrongHandshakeOrAStanzaBeforeItGetsNotAuthorizedAndNothingIsApplied() async throws {
        try await withService(configure: { $0.feedSecret = FeedSecret(Array(Self.secret.utf8)) }) { ports in
            // A wrong secret, with presences right behind the handshake in the same read.
            let wrong = try await Feeder.connect(port: ports.feed)
            let id = try await Self.open(wrong)
            try await wrong.send(
                "<handshake>\(Self.handshake(id: id, secret: "guess"))</handshake>"
                    + "<presence from='mallory@example.com/desk'/>")
            let refused = try await wrong.readUntilClosed()
            #expect(refused.closedByService)
            #expect(refused.text.contains("<not-authorized xmlns='urn:ietf:params:xml:ns:xmpp-streams'/>"))
            #expect(!refused.text.contains("<handshake/>"))
            wrong.close()
            // A presence before any handshake.
            let eager = try await Feeder.connect(port: ports.feed)
            _ = try await Self.open(eager)
            try await eager.send("<presence from='eve@example.com/desk'/>")
            #expect(try await eager.readUntilClosed().text.contains("not-authorized"))
            eager.close()
            // No header at all.
            let headless = try await Feeder.connect(port: ports.feed)
            try await headless.send("<presence from='trent@example.com/desk'/>")
            #expect(try await headless.readUntilClosed().text.contains("not-authorized"))
            headless.close()
            // A right one afterwards still works; none of the others' presences were applied.
            let right = try await Feeder.connect(port: ports.feed)
            defer { right.close() }
            let rightID = try await Self.open(right)
            try await right.send(
                "<handshake>\(Self.handshake(id: rightID, secret: Self.secret))</handshake><presence from='bob@example.com/desk'/>"
            )
            #expect(
                try await eventually { try await state(of: "bob@example.com", port: ports.http)?.state == .available })
            for intruder in ["mallory", "eve", "trent"] {
                #expect(try await state(of: "\(intruder)@example.com", port: ports.http)?.state == .unknown)
            }
            #expect(try await get(ServiceStats.self, "/v1/stats", port: ports.http).updatesApplied == 1)
        }
    }

    @Test(.realServers) func anIndependentComponentLibraryFeedsWithTheSharedSecret() async throws {
        guard (try? Tool.run("/usr/bin/python3", ["-c", "import slixmpp"])) == 0 else {
            Issue.record("python3-slixmpp is not installed (apt-get install python3-slixmpp; .ci/run does)")
            return
        }
        try await withService(configure: { $0.feedSecret = FeedSecret(Array(Self.secret.utf8)) }) { ports in
            let script = Bundle.module.url(forResource: "slixmpp_component", withExtension: "py")!
            let port = ports.feed
            let status = try await offPool { () -> Int32 in
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
                process.arguments = [
                    script.path, "feed.example.com", "127.0.0.1", String(port), "carol@example.com/desk",
                ]
                process.environment = ["FEED_SECRET": FeedHandshakeTests.secret]
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                process.waitUntilExit()
                return process.terminationStatus
            }
            #expect(status == 0, "slixmpp's session started: the handshake was accepted")
            #expect(try await eventually { try await state(of: "carol@example.com", port: ports.http)?.show == .dnd })
            #expect(try await state(of: "carol@example.com", port: ports.http)?.status == "In a meeting (slixmpp)")
        }
    }
}
