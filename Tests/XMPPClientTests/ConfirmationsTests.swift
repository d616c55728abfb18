import PresenceModel
import PresenceTestSupport
import Testing
import XMPPClient
import XMPPStream

@testable import PresenceSource

/// Which statements a round of questions to the server accepts as answers, and when it ends.
@Suite("A round of questions ends on answers from the right member at the right time")
struct ConfirmationsTests {
    private let settle = Duration.milliseconds(10)

    /// The ids of the last-activity requests in `bytes`, in order.
    private func requestIDs(_ bytes: [UInt8]?) -> [String] {
        let text = String(decoding: bytes ?? [], as: UTF8.self)
        return text.split(separator: "id='").dropFirst().map { String($0.prefix { $0 != "'" }) }
            .filter { $0.hasPrefix(Confirmations.lastActivityPrefix) }
    }

    /// A server's XEP-0012 answer, as the session reads it.
    private func lastActivity(id: String, from: String, seconds: Int) throws -> (IQ, Stanza) {
        let parser = XMPPStreamParser()
        var stanza: Stanza?
        try parser.feed(
            Array(
                "<iq xmlns='jabber:client' type='result' id='\(id)' from='\(from)'><query xmlns='jabber:iq:last' seconds='\(seconds)'/></iq>"
                    .utf8)
        ) { if case .stanza(let parsed) = $0 { stanza = parsed } }
        let parsed = try #require(stanza)
        return (try #require(IQ(parsed)), parsed)
    }

    private func settled(_ confirmations: Confirmations) -> [Confirmations.Finished] {
        confirmations.settle(at: .now + .seconds(1), quiet: settle) { _ in }.finished
    }

    @Test func aLastActivityAnswerCountsOnlyFromTheMemberItAsked() throws {
        let confirmations = Confirmations()
        let round = confirmations.open(.snapshot, members: [jid("ann@corp.example")])
        let request = try #require(requestIDs(confirmations.pingAnswered(round)).first)

        let (forged, forgedStanza) = try lastActivity(id: request, from: "mallory@corp.example", seconds: 999)
        _ = confirmations.lastActivityAnswered(forged, forgedStanza)
        #expect(settled(confirmations).isEmpty, "someone else cannot say ann is offline")
        let (fromResource, resourceStanza) = try lastActivity(id: request, from: "ann@corp.example/desk", seconds: 999)
        _ = confirmations.lastActivityAnswered(fromResource, resourceStanza)
        #expect(settled(confirmations).isEmpty, "the server answers for the account, from its bare JID")

        let (answer, stanza) = try lastActivity(id: request, from: "ann@corp.example", seconds: 999)
        #expect(confirmations.lastActivityAnswered(answer, stanza))
        let finished = settled(confirmations)
        #expect(finished.map(\.round) == [round] && finished.first?.offline == 1)
    }

    @Test func anAnswerToAQuestionAskedBeforeARoundOpenedDoesNotEndThatRound() throws {
        let confirmations = Confirmations()
        let snapshot = confirmations.open(.snapshot, members: [jid("ann@corp.example")])
        let request = try #require(requestIDs(confirmations.pingAnswered(snapshot)).first)
        // Ann logs in, and a lookup probes her, before the server's answer to the older question arrives.
        let probe = confirmations.open(.probe, members: [jid("ann@corp.example")])
        let (answer, stanza) = try lastActivity(id: request, from: "ann@corp.example", seconds: 300)
        _ = confirmations.lastActivityAnswered(answer, stanza)
        #expect(settled(confirmations).map(\.round) == [snapshot], "the probe still waits for its own answer")
        #expect(confirmations.pending(probe)?.members == [jid("ann@corp.example")])
    }

    @Test func aMemberWhoLeavesTheRosterNoLongerHoldsARoundOpen() {
        let confirmations = Confirmations()
        let round = confirmations.open(.snapshot, members: [jid("ann@corp.example"), jid("bob@corp.example")])
        confirmations.record(available("bob@corp.example/desk"), receivedAt: time(0), at: .now - .seconds(1))
        #expect(settled(confirmations).isEmpty, "ann has not been answered for")
        confirmations.forget([jid("ann@corp.example")])
        #expect(settled(confirmations).map(\.round) == [round])
    }

    @Test func aRoundThatIsNotAdmittedIsNeverOpened() {
        let confirmations = Confirmations()
        var offered: String?
        let id = confirmations.open(.probe, members: [jid("ann@corp.example")]) { id in
            offered = id
            return false
        }
        #expect(id == nil && offered != nil)
        #expect(confirmations.isEmpty)
        #expect(confirmations.open(.probe, members: [jid("ann@corp.example")]) == offered, "the id was not used up")
    }
}
