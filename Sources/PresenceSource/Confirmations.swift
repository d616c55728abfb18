import PresenceModel
import PresenceStore
import XMPPClient
import XMPPStream

/// The questions one session has put to the server about roster members (the snapshot after the initial
/// presence, probes for new contacts and for lookups), and what the server has said for certain in answer,
/// member by member (``MemberConfirmation``).
///
/// A round asks its members; a ping follows the question in the same write. The ping's answer is no barrier
/// (RFC 6121 promises no order between it and the presences a probe produces, and ejabberd answers it first):
/// it only says when to ask the server directly about the members it has said nothing about yet: its session
/// directory for all of them in one question when it has one (``SessionDirectory``), XEP-0012 last activity for
/// each otherwise. A round ends when every member's answer is final.
///
/// Last-activity questions go through a ``QuestionWindow``: never more in flight than the server answers in
/// about a second (``ReadRateLimitDetector``), so a server that reads the watcher at a limited rate is asked at
/// that rate, and the limit is named while it holds the session back.
final class Confirmations: Sendable {
    /// Probes written in one round that the server has not read yet (the ping after them is unanswered).
    private struct UnreadWrite {
        let bytes: Int
        let members: Int
        let sent: ContinuousClock.Instant
    }

    private struct State {
        var rounds: [String: ConfirmationRound] = [:]
        /// By round id, kept after a lookup stops waiting for its round: the server still reads the bytes.
        var unread: [String: UnreadWrite] = [:]
        /// Last-activity questions waiting to be sent and in flight.
        var questions: QuestionWindow
        var detector = ReadRateLimitDetector()
        /// Members asked about in one question to the server's session directory, if it has one.
        var directory: DirectoryQuestions
        var issued = 0

        /// The open rounds still waiting for `member`'s answer. A list, not a view of `rounds`: a loop that
        /// mutated the rounds while it walked the dictionary would copy every round's members at each step.
        func rounds(asking member: BareJID) -> [String] {
            rounds.compactMap { $0.value.unsettled.contains(member) ? $0.key : nil }
        }
    }

    static let roundPrefix = "confirm-"
    /// Last-activity request ids: the prefix and a base-36 number, as short as the protocol allows, for a server
    /// that reads the watcher at a limited rate reads every byte of every question.
    static let lastActivityPrefix = "q"

    /// How long a last-activity question may go unanswered before its place in the window is freed.
    static let questionTimeout: Duration = .seconds(30)

    /// The most last-activity questions in flight at once.
    let maximumInFlight: Int
    /// Whether each session asks the server's session directory before last activity.
    let usesDirectory: Bool
    private let state: Locked<State>

    init(maximumInFlight: Int, usesDirectory: Bool = false) {
        self.maximumInFlight = maximumInFlight
        self.usesDirectory = usesDirectory
        state = Locked(
            State(questions: QuestionWindow(limit: maximumInFlight), directory: .init(isUsable: usesDirectory)))
    }

    var isEmpty: Bool { state.withLock { $0.rounds.isEmpty } }

    /// Opens a round for `members`; returns its id, which is also the id of the ping to send after the question.
    func open(_ purpose: Purpose, members: Set<BareJID>) -> String {
        open(purpose, members: members) { _ in true }!
    }

    /// Opens a round for `members` if `admit`, called with its id under the rounds' lock (before any answer can
    /// settle the round), says yes: a waiter registered there cannot miss the round's end. Nil when refused.
    func open(_ purpose: Purpose, members: Set<BareJID>, admit: (String) -> Bool) -> String? {
        state.withLock { state in
            let id = "\(Self.roundPrefix)\(state.issued + 1)"
            guard admit(id) else { return nil }
            state.issued += 1
            state.rounds[id] = ConfirmationRound(
                purpose: purpose, started: .now, issue: state.issued,
                members: Dictionary(uniqueKeysWithValues: members.map { ($0, MemberConfirmation()) }),
                unsettled: members)
            return id
        }
    }

    /// Stops waiting for `members` in every round (they left the roster: the server will say nothing more about
    /// them). Rounds left with nobody to wait for end at the next settle pass.
    func forget(_ members: Set<BareJID>) {
        guard !members.isEmpty else { return }
        state.withLock { state in
            for id in Array(state.rounds.keys) {
                state.rounds[id]!.unsettled.subtract(members)
                state.rounds[id]!.candidates.subtract(members)
            }
            state.questions.forget(members)
            state.directory.forget(members)
        }
    }

    /// Notes, for every open round of `purpose` waiting for `member`'s answer, that the storage shows the member
    /// available as the server says they have no resource; false when no such round waits for them. The round's
    /// answer then says it corrected a status (``Settled/correctsShownAvailable``): one decision, made when the
    /// answer is final, whichever of the update and the verdict reaches the storage first.
    func noteShownAvailable(_ member: BareJID, for purpose: Purpose) -> Bool {
        state.withLock { state in
            var noted = false
            for id in state.rounds(asking: member) where state.rounds[id]!.purpose == purpose {
                state.rounds[id]!.shownAvailable.insert(member)
                noted = true
            }
            return noted
        }
    }

    /// Whether a round still has members without a final answer.
    func isOpen(_ id: String) -> Bool {
        state.withLock { $0.rounds[id] != nil }
    }

    /// Whether the server has read round `id`'s question: the ping after it was answered, or the round is over.
    func hasRead(_ id: String) -> Bool {
        state.withLock { $0.rounds[id]?.pingAnswered ?? true }
    }

    /// Forgets a round (a lookup stopped waiting for it).
    func close(_ id: String) {
        state.withLock { _ = $0.rounds.removeValue(forKey: id) }
    }

    /// Forgets every round: the session ended.
    func reset() {
        let limit = maximumInFlight
        let directory = DirectoryQuestions(isUsable: usesDirectory)
        state.withLock { $0 = State(questions: QuestionWindow(limit: limit), directory: directory, issued: $0.issued) }
    }

    /// An update the session applied: a statement about its sender for every round that asked about them.
    func record(_ update: PresenceUpdate, receivedAt time: PresenceTime, at now: ContinuousClock.Instant = .now) {
        let member = update.from.bare
        state.withLock { state in
            for id in state.rounds(asking: member) {
                state.rounds[id]!.members[member]!.record(update, at: now)
                state.rounds[id]!.candidates.insert(member)
                if state.rounds[id]!.purpose == .probe {
                    state.rounds[id]!.captured[member, default: UserPresence()].apply(update, receivedAt: time)
                }
            }
        }
    }

    /// The ping after round `id`'s question was answered: asks about each member the server has said nothing
    /// about yet, in the next question to the session directory when the session has one, else in a last-activity
    /// question each (a lookup's before the others). False when `id` is no open round.
    func pingAnswered(_ id: String, at now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { state in
            if let write = state.unread.removeValue(forKey: id) {
                state.detector.answered(bytes: write.bytes, answers: write.members, at: now)
            }
            guard let round = state.rounds[id] else { return false }
            state.rounds[id]!.pingAnswered = true
            let silent = round.unsettled.filter { round.members[$0]!.isSilent }
            if state.directory.isUsable {
                state.directory.enqueue(silent)
            } else {
                state.questions.enqueue(silent, urgent: round.purpose == .probe)
            }
            return true
        }
    }

    /// Whether a question to the session directory can go now (see ``takeDirectoryQuestion()``).
    var isDirectoryQuestionDue: Bool { state.withLock { $0.directory.isDue } }

    /// Starts a question to the session directory for every member waiting for one; false when none is due.
    func takeDirectoryQuestion() -> Bool {
        state.withLock { state in
            guard state.directory.isDue else { return false }
            state.issued += 1
            return state.directory.take(issue: state.issued) != nil
        }
    }

    /// The session directory's answer to the question in flight: every account with a session now, for every
    /// round opened before the question. A member it does not list has no session. A member it lists has their
    /// presence on its way (ejabberd answers the round's ping before its members' sessions answer the probes), or
    /// a session that sent none: asked last activity only if no presence comes within a second
    /// (``recheckLastActivity(at:after:)``), for each question costs the server a check of the watcher's
    /// subscription.
    func directoryAnswered(_ sessions: Set<BareJID>, at now: ContinuousClock.Instant = .now) {
        state.withLock { state in
            guard let batch = state.directory.answered() else { return }
            for member in batch.members {
                let hasSession = sessions.contains(member)
                for id in state.rounds(asking: member) where state.rounds[id]!.issue < batch.issue {
                    if hasSession {
                        state.rounds[id]!.members[member]!.recordSession(at: now)
                    } else {
                        state.rounds[id]!.members[member]!.recordNoSession(at: now)
                    }
                    state.rounds[id]!.candidates.insert(member)
                }
            }
        }
    }

    /// The session directory failed: it is not asked again in this session, and the members it was to answer for
    /// are asked last activity instead.
    func directoryFailed() {
        state.withLock { state in
            state.questions.enqueue(state.directory.fail())
        }
    }

    /// Asks again about the unsettled members of round `id` that no question is waiting or in flight for, nor a
    /// question to the session directory: a probe, then last activity, for each. Nothing while the server has not
    /// read the round's question yet (its ping is unanswered): a server that busy is not handed more.
    func reask(_ id: String) {
        state.withLock { state in
            guard let round = state.rounds[id], round.pingAnswered else { return }
            let idle = round.unsettled.filter { !state.questions.isAsking($0) && !state.directory.isAsking($0) }
            state.questions.enqueue(idle, probeFirst: true)
        }
    }

    /// Queues last activity again for members it answered with 0 seconds `interval` ago or more without a
    /// presence since: their last session may have ended within that second.
    func recheckLastActivity(at now: ContinuousClock.Instant = .now, after interval: Duration) {
        state.withLock { state in
            for id in Array(state.rounds.keys) {
                let due = state.rounds[id].map { round in
                    round.candidates.filter { round.members[$0]!.needsLastActivityAgain(at: now, after: interval) }
                } ?? []
                for member in due { state.rounds[id]!.members[member]!.askingLastActivityAgain() }
                state.questions.enqueue(due)
            }
        }
    }

    /// The questions the window has room for now, as bytes to send (empty when none): each a last-activity
    /// request, after a probe when it is asked again.
    func release(at now: ContinuousClock.Instant = .now) -> [UInt8] {
        state.withLock { state in
            var bytes: [UInt8] = []
            for question in state.questions.take() {
                var writer = XMPPWriter()
                if question.probeFirst { writer.presence(type: "probe", to: question.member.rawValue) }
                state.issued += 1
                let requestID = Self.lastActivityPrefix + String(state.issued, radix: 36)
                let request = writer.bytes + LastActivity.request(id: requestID, to: question.member.rawValue)
                state.questions.sent(
                    requestID, member: question.member, issue: state.issued, bytes: request.count, at: now)
                bytes += request
            }
            return bytes
        }
    }

    /// Round `id`'s probes and ping, `bytes` for `members` members, were written: the ping's answer says the
    /// server has read them, at the rate the read-limit detector judges (a lookup storm meets a limit as the
    /// snapshot's questions do).
    func written(_ id: String, bytes: Int, members: Int, at now: ContinuousClock.Instant = .now) {
        state.withLock { $0.unread[id] = UnreadWrite(bytes: bytes, members: members, sent: now) }
    }

    /// How long written probes may stay unread before they count as waiting: a server without a limit reads them
    /// within milliseconds.
    static let unreadAfter: Duration = .milliseconds(250)

    /// Looks at how the server answers: frees the places of questions it never answered, sizes the window to
    /// the rate it answers at, and says whether a read rate limit began or ended.
    func pace(at now: ContinuousClock.Instant = .now) -> ReadRateLimitDetector.Change? {
        state.withLock { state in
            state.questions.expire(at: now, timeout: Self.questionTimeout)
            let unread = state.unread.values.reduce(0) { $0 + (now - $1.sent >= Self.unreadAfter ? $1.members : 0) }
            let change = state.detector.evaluate(at: now, waiting: state.questions.waitingCount + unread)
            state.questions.limit = state.detector.inFlightLimit(
                at: now, oldest: state.questions.oldestSent, maximum: maximumInFlight)
            return change
        }
    }

    /// The member last-activity request `id` asks about, while it is in flight.
    func memberAsked(by id: String) -> BareJID? {
        state.withLock { $0.questions.inFlight[id]?.member }
    }

    /// The read rate limit the session's questions meet now, nil when none.
    var readLimit: ReadRateLimitDetector.Limit? { state.withLock { $0.detector.limit } }

    /// Last-activity questions waiting to be sent, and in flight.
    var questionsWaiting: (waiting: Int, inFlight: Int) {
        state.withLock { ($0.questions.waitingCount, $0.questions.inFlight.count) }
    }

    /// A last-activity answer (result or error) with `id`; false when `id` is no request of ours.
    ///
    /// Only an answer from the member's own bare JID counts (the server answers for its account; anyone else who
    /// knows the watcher's address could send a result with a guessed id), and only for rounds opened before the
    /// request went out: an answer computed before a round began says nothing about the time it asks about.
    func lastActivityAnswered(_ iq: IQ, _ stanza: Stanza, at now: ContinuousClock.Instant = .now) -> Bool {
        guard iq.id.hasPrefix(Self.lastActivityPrefix) else { return false }
        state.withLock { state in
            guard let request = state.questions.inFlight[iq.id],
                iq.from.flatMap({ try? JID($0) }).map({ $0.resource == nil && $0.bare == request.member }) == true
            else { return }
            _ = state.questions.answered(iq.id)
            state.detector.answered(bytes: request.bytes, at: now)
            let member = request.member
            let seconds = iq.kind == .result ? LastActivity.seconds(in: stanza) : nil
            let refusal = seconds == nil ? (IQ.errorCondition(of: stanza) ?? "no answer") : nil
            for id in state.rounds(asking: member) where state.rounds[id]!.issue < request.issue {
                if let seconds {
                    state.rounds[id]!.members[member]!.recordLastActivity(seconds: seconds, at: now)
                    state.rounds[id]!.candidates.insert(member)
                } else if let refusal {
                    state.rounds[id]!.members[member]!.recordLastActivityRefusal(refusal)
                }
            }
        }
        return true
    }

    /// Makes final every answer that is certain now (see ``MemberConfirmation/settle(at:quiet:)``) and hands each
    /// to `reconcile`; returns the rounds that ended with them and when to look again.
    ///
    /// `reconcile` runs under the lock that ``record(_:receivedAt:at:)`` takes before the session applies an
    /// update: an update is either seen by the verdict or applied to the storage after what `reconcile` wrote,
    /// never overwritten by it.
    func settle(
        at now: ContinuousClock.Instant = .now, quiet: Duration, reconcile: (Settled) -> Void
    ) -> SettlePass {
        state.withLock { state in
            var pass = SettlePass()
            for id in Array(state.rounds.keys) {
                // A round with nobody to wait for (an empty roster) ends at once.
                guard !state.rounds[id]!.candidates.isEmpty || state.rounds[id]!.unsettled.isEmpty else { continue }
                var round = state.rounds.removeValue(forKey: id)!
                for member in round.candidates {
                    guard let verdict = round.members[member]!.settle(at: now, quiet: quiet) else {
                        if let deadline = round.members[member]!.settles(quiet: quiet) {
                            pass.nextDeadline = min(pass.nextDeadline ?? deadline, deadline)
                        }
                        continue
                    }
                    round.candidates.remove(member)
                    round.unsettled.remove(member)
                    if verdict == .offline { round.offline += 1 }
                    reconcile(
                        Settled(
                            round: id, purpose: round.purpose, member: member, verdict: verdict,
                            resources: round.members[member]!.resources, captured: round.captured[member],
                            correctsShownAvailable: round.shownAvailable.contains(member)))
                }
                if round.unsettled.isEmpty {
                    pass.finished.append(
                        Finished(
                            round: id, purpose: round.purpose, members: round.members.count, offline: round.offline,
                            started: round.started))
                } else {
                    state.rounds[id] = round
                }
            }
            // Nobody waits for an answer any more: questions not sent or not answered are let go.
            if state.rounds.isEmpty { state.questions.removeAll() }
            return pass
        }
    }

    /// Round `id`'s members without a final answer, nil when it is not open.
    func pending(_ id: String) -> Pending? {
        state.withLock { state in
            guard let round = state.rounds[id] else { return nil }
            var refusals: [String: Int] = [:]
            var withSession = 0
            for member in round.unsettled {
                let confirmation = round.members[member]!
                if let refusal = confirmation.lastActivityRefusal { refusals[refusal, default: 0] += 1 }
                if confirmation.hasSession { withSession += 1 }
            }
            return Pending(
                round: id, purpose: round.purpose, members: round.unsettled, refusals: refusals,
                withSession: withSession)
        }
    }

    /// Open rounds of `purpose`, oldest first.
    func rounds(_ purpose: Purpose) -> [(id: String, started: ContinuousClock.Instant)] {
        state.withLock { state in
            state.rounds.filter { $0.value.purpose == purpose }.map { ($0.key, $0.value.started) }
                .sorted { $0.started < $1.started }
        }
    }
}
