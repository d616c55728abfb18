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
        let confirmations = Confirmations(maximumInFlight: 256)
        let round = confirmations.open(.snapshot, members: [jid("ann@corp.example")])
        #expect(confirmations.pingAnswered(round))
        let request = try #require(requestIDs(confirmations.release()).first)

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
        let confirmations = Confirmations(maximumInFlight: 256)
        let snapshot = confirmations.open(.snapshot, members: [jid("ann@corp.example")])
        #expect(confirmations.pingAnswered(snapshot))
        let request = try #require(requestIDs(confirmations.release()).first)
        // Ann logs in, and a lookup probes her, before the server's answer to the older question arrives.
        let probe = confirmations.open(.probe, members: [jid("ann@corp.example")])
        let (answer, stanza) = try lastActivity(id: request, from: "ann@corp.example", seconds: 300)
        _ = confirmations.lastActivityAnswered(answer, stanza)
        #expect(settled(confirmations).map(\.round) == [snapshot], "the probe still waits for its own answer")
        #expect(confirmations.pending(probe)?.members == [jid("ann@corp.example")])
    }

    @Test func aMemberWhoLeavesTheRosterNoLongerHoldsARoundOpen() {
        let confirmations = Confirmations(maximumInFlight: 256)
        let round = confirmations.open(.snapshot, members: [jid("ann@corp.example"), jid("bob@corp.example")])
        confirmations.record(available("bob@corp.example/desk"), receivedAt: time(0), at: .now - .seconds(1))
        #expect(settled(confirmations).isEmpty, "ann has not been answered for")
        confirmations.forget([jid("ann@corp.example")])
        #expect(settled(confirmations).map(\.round) == [round])
    }

    @Test func aRoundThatIsNotAdmittedIsNeverOpened() {
        let confirmations = Confirmations(maximumInFlight: 256)
        var offered: String?
        let id = confirmations.open(.probe, members: [jid("ann@corp.example")]) { id in
            offered = id
            return false
        }
        #expect(id == nil && offered != nil)
        #expect(confirmations.isEmpty)
        #expect(confirmations.open(.probe, members: [jid("ann@corp.example")]) == offered, "the id was not used up")
    }

    @Test func neverMoreQuestionsInFlightThanTheWindowAndTheNextGoesWhenAnAnswerComes() throws {
        let confirmations = Confirmations(maximumInFlight: 4)
        let members = (0 ..< 10).map { jid("m\($0)@corp.example") }
        let round = confirmations.open(.snapshot, members: Set(members))
        #expect(confirmations.pingAnswered(round))
        let first = requestIDs(confirmations.release())
        #expect(first.count == 4)
        #expect(requestIDs(confirmations.release()).isEmpty, "the window is full")
        #expect(confirmations.questionsWaiting == (6, 4))
        // Asking again does not ask twice about members whose question waits or is in flight.
        confirmations.reask(round)
        #expect(confirmations.questionsWaiting == (6, 4))

        let answered = try #require(first.first)
        // Whoever the first request asked about, the answer comes from them.
        let (answer, stanza) = try lastActivity(id: answered, from: memberAsked(by: answered, in: confirmations), seconds: 60)
        #expect(confirmations.lastActivityAnswered(answer, stanza))
        #expect(requestIDs(confirmations.release()).count == 1, "one answer, one more question")
    }

    @Test func aQuestionAskedAgainGoesWithAProbeAndIsAsShortAsTheProtocolAllows() throws {
        let confirmations = Confirmations(maximumInFlight: 8)
        let round = confirmations.open(.snapshot, members: [jid("ann@corp.example")])
        confirmations.reask(round)
        #expect(confirmations.release().isEmpty, "nothing asked again before the server has read the question")
        #expect(confirmations.pingAnswered(round))
        let first = try #require(requestIDs(confirmations.release()).first)
        // Ann has a session and sent no presence: asked again.
        let (answer, stanza) = try lastActivity(id: first, from: "ann@corp.example", seconds: 0)
        #expect(confirmations.lastActivityAnswered(answer, stanza))
        confirmations.reask(round)
        let text = String(decoding: confirmations.release(), as: UTF8.self)
        #expect(text.hasPrefix("<presence type='probe' to='ann@corp.example'/>"), "\(text)")
        #expect(text.contains("<query xmlns='jabber:iq:last'/>"))
        let question = text.replacingOccurrences(of: "<presence type='probe' to='ann@corp.example'/>", with: "")
        // The stanza, its type, a short id, the member's JID and the query's namespace: nothing more.
        #expect(
            question.utf8.count <= 66 + "ann@corp.example".utf8.count,
            "a last-activity question is \(question.utf8.count) bytes: \(question)")
    }

    /// The member request `id` asked about, read back from the server's point of view: the `to` of the request.
    private func memberAsked(by id: String, in confirmations: Confirmations) -> String {
        confirmations.memberAsked(by: id)?.rawValue ?? ""
    }
}

/// How the watcher tells a server that reads it at a limited rate from one that is only busy.
@Suite("A server's read rate limit is told from a busy server")
struct ReadRateLimitDetectorTests {
    /// Answers at `perSecond` for `seconds`, each to a question of `bytes`, with questions waiting all along.
    private func answers(
        perSecond: Int, for seconds: Int, bytes: Int, into detector: inout ReadRateLimitDetector,
        from start: ContinuousClock.Instant
    ) -> [ReadRateLimitDetector.Change] {
        var changes: [ReadRateLimitDetector.Change] = []
        let gap = Duration.seconds(1) / perSecond
        for index in 0 ..< perSecond * seconds {
            let now = start + gap * index
            detector.answered(bytes: bytes, at: now)
            if let change = detector.evaluate(at: now, waiting: 1000) { changes.append(change) }
        }
        return changes
    }

    @Test func answersAtAShippedShapersRateAreALimitNamedWithinSecondsAndTheWindowShrinksToASecondOfThem() throws {
        let start = ContinuousClock.now
        var detector = ReadRateLimitDetector(origin: start)
        // ejabberd's shipped `normal` shaper: 3,000 bytes a second of 75-byte questions, 40 a second.
        let changes = answers(perSecond: 40, for: 5, bytes: 75, into: &detector, from: start)
        guard case .began(let limit) = try #require(changes.first) else {
            Issue.record("no limit: \(changes)")
            return
        }
        #expect(changes.count == 1, "said once")
        #expect((2_700 ... 3_300).contains(limit.bytesPerSecond), "\(limit)")
        #expect(limit.since - start <= .seconds(1))
        let limitAt = start + .seconds(5)
        #expect(
            (38 ... 42).contains(detector.inFlightLimit(at: limitAt, oldest: limitAt - .seconds(2), maximum: 256)),
            "a second of answers in flight once questions wait over a second for theirs")
        #expect(detector.inFlightLimit(at: limitAt, oldest: limitAt - .milliseconds(200), maximum: 256) == 256)
        #expect(ServerReadLimit(bytesPerSecond: limit.bytesPerSecond, answersPerSecond: 40, waiting: 1, since: .now())
            .likelySetting?.contains("c2s_shaper") == true, "ejabberd's shipped shaper named")
        // The backlog drains: the limit no longer holds anything back.
        #expect(detector.evaluate(at: limitAt, waiting: 0) == .ended)
        #expect(detector.inFlightLimit(at: limitAt, oldest: nil, maximum: 256) == 256)
    }

    @Test func aShapersBurstRunningOutIsFollowedToTheShapersRate() throws {
        // A slow watcher keeps ejabberd's 20,000-byte burst going for seconds: 120 answers a second, then the
        // shaper's 40.
        let start = ContinuousClock.now
        var detector = ReadRateLimitDetector(origin: start)
        var changes = answers(perSecond: 120, for: 3, bytes: 75, into: &detector, from: start)
        changes += answers(perSecond: 40, for: 4, bytes: 75, into: &detector, from: start + .seconds(3))
        #expect(changes.count == 1, "one limit, its rate followed: \(changes)")
        let limit = try #require(detector.limit)
        #expect((2_000 ... 4_500).contains(limit.bytesPerSecond), "at the shaper's rate once the burst is over: \(limit)")
    }

    @Test func aBusyServerAnsweringThousandsASecondIsNoLimit() {
        let start = ContinuousClock.now
        var detector = ReadRateLimitDetector(origin: start)
        let changes = answers(perSecond: 2_000, for: 5, bytes: 75, into: &detector, from: start)
        #expect(changes.isEmpty)
        #expect(detector.limit == nil)
        #expect(
            detector.inFlightLimit(at: start + .seconds(5), oldest: start + .seconds(5) - .milliseconds(20), maximum: 256)
                == 256)
    }

    @Test func aShortBacklogIsNoLimit() {
        let start = ContinuousClock.now
        var detector = ReadRateLimitDetector(origin: start)
        let changes = answers(perSecond: 40, for: 2, bytes: 75, into: &detector, from: start)
        #expect(changes.isEmpty, "questions waited less than \(ReadRateLimitDetector.span)")
    }

    @Test func aRateIsCalledAShippedLimitOnlyNearThatLimitsRate() {
        func named(_ bytesPerSecond: Int) -> String? {
            ServerReadLimit(bytesPerSecond: bytesPerSecond, answersPerSecond: 1, waiting: 1, since: .now()).likelySetting
        }
        #expect(named(2_900)?.contains("c2s_shaper") == true)
        #expect(named(9_800)?.contains("mod_limits") == true)
        #expect(named(10_240)?.contains("mod_limits") == true)
        #expect(named(17_000) == nil, "a server short of CPU is not called a shaper")
        #expect(named(600) == nil)
    }
}
