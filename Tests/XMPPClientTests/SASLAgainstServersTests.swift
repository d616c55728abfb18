import Foundation
import PresenceTestSupport
import Testing
import XMPPClient
import XMPPStream

/// A blocking client stream over loopback TCP: enough to drive SASL against a real server in a test.
private final class TestStream {
    let descriptor: Int32
    private let parser = XMPPStreamParser()
    private var pending: [Stanza] = []

    init(port: Int, domain: String) throws {
        descriptor = try LoopbackTCP.connect(port: port)
        var writer = XMPPWriter()
        writer.openStream(to: domain)
        try send(writer.bytes)
    }

    deinit { close(descriptor) }

    func send(_ bytes: [UInt8]) throws { try bytes.withUnsafeBytes { try LoopbackTCP.sendAll(descriptor, $0) } }

    /// The next top-level element the server sends (10 s at most).
    func next() throws -> Stanza {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while pending.isEmpty {
            let count = recv(descriptor, &chunk, chunk.count, 0)
            guard count > 0 else { throw LoopbackTCP.Failure(description: "the server closed the stream") }
            try parser.feed(chunk[..<count]) { event in
                if case .stanza(let stanza) = event { pending.append(stanza) }
            }
        }
        return pending.removeFirst()
    }

    /// Logs in; the mechanism used, or why not.
    func authenticate(username: String, password: String) throws -> Result<String, SASLFailure> {
        var negotiation = SASLNegotiation(username: username, password: password, allowPlain: false)
        let features = try next()
        let auth: [UInt8]
        do throws(SASLFailure) { auth = try negotiation.start(features: features) } catch { return .failure(error) }
        try send(auth)
        while true {
            let element = try next()
            let step: SASLNegotiation.Step
            do throws(SASLFailure) { step = try negotiation.receive(element) } catch { return .failure(error) }
            switch step {
            case .send(let bytes): try send(bytes)
            case .succeeded: return .success(negotiation.mechanism ?? "")
            }
        }
    }
}

@Suite("SASL against real Prosody and ejabberd", .realServers)
struct SASLAgainstServersTests {
    @Test(arguments: XMPPServerKind.allCases) func theRightPasswordLogsInWithSCRAMAndTheServerProvesItKnowsIt(on kind: XMPPServerKind) async throws {
        let server = try await kind.start(accounts: ["watcher": "correct horse ✓ battery"])
        defer { server.stop() }
        let stream = try TestStream(port: server.port, domain: server.domain)
        let result = try stream.authenticate(username: "watcher", password: "correct horse ✓ battery")
        #expect(try result.get().hasPrefix("SCRAM-SHA-"))
    }

    @Test(arguments: XMPPServerKind.allCases) func aWrongPasswordIsRefusedAsNotAuthorized(on kind: XMPPServerKind) async throws {
        let server = try await kind.start(accounts: ["watcher": "secret"])
        defer { server.stop() }
        let stream = try TestStream(port: server.port, domain: server.domain)
        let result = try stream.authenticate(username: "watcher", password: "wrong")
        guard case .failure(.refused(let condition, _)) = result else {
            Issue.record("expected a refusal, got \(result)")
            return
        }
        #expect(condition == "not-authorized")
    }

    @Test func plainIsNeverSentOverAnUnencryptedStream() throws {
        var negotiation = SASLNegotiation(username: "u", password: "p", allowPlain: false)
        let parser = XMPPStreamParser()
        var features: Stanza?
        try parser.feed(
            Array(
                """
                <stream:features xmlns:stream='http://etherx.jabber.org/streams'>\
                <mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms>\
                </stream:features>
                """.utf8)
        ) { if case .stanza(let stanza) = $0 { features = stanza } }
        let offered = try #require(features)
        #expect(SASLNegotiation.offeredMechanisms(in: offered) == ["PLAIN"])
        #expect(throws: SASLFailure.noCommonMechanism(offered: ["PLAIN"], plainAllowed: false)) {
            try negotiation.start(features: offered)
        }
    }
}
