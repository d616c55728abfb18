import PresenceModel
import PresenceStore
import XMPPClient
import XMPPStream

/// The probes sent on behalf of lookups and not answered yet, and the session they go out on.
///
/// Each batch is a ``Confirmations`` round: `<presence type='probe'/>` for each member and a ping, in one write.
/// A member is answered once the server has said something certain about them (``MemberConfirmation``); the
/// batch returns when every member is answered or its time is up, with the members answered by then.
final class PendingProbes: Sendable {
    typealias Answers = [BareJID: UserPresence]

    private enum Outcome: Sendable {
        case finished, timedOut, closed, cancelled
    }

    private struct Waiting {
        let wake: Promise<Outcome>
        var answers: Answers = [:]
    }

    private struct State {
        var sender: XMPPStanzaSender?
        var waiting: [String: Waiting] = [:]
    }

    private let state = Locked(State())
    private let confirmations: Confirmations

    init(confirmations: Confirmations) {
        self.confirmations = confirmations
    }

    /// A session is up: probes may go out on it.
    func open(_ sender: XMPPStanzaSender) {
        state.withLock { $0.sender = sender }
    }

    /// The session ended: no more probes, and every batch still waiting fails as not connected.
    func close() {
        let waiting = state.withLock { state in
            state.sender = nil
            defer { state.waiting = [:] }
            return state.waiting.values.map(\.wake)
        }
        for wake in waiting { wake.fulfil(.closed) }
    }

    var isOpen: Bool { state.withLock { $0.sender != nil } }

    /// Probes `members`; returns, within `timeout`, each member the server answered for certain.
    func probe(_ members: Set<BareJID>, timeout: Duration) async throws -> Answers {
        // The waiter is registered as the round opens, under the rounds' lock then this one (the order settling
        // answers takes them in): no answer can end the round before someone waits for it, and a session that
        // closed meanwhile refuses the round.
        let wake = Promise<Outcome>()
        var sender: XMPPStanzaSender?
        let opened = confirmations.open(.probe, members: members) { id in
            state.withLock { state in
                sender = state.sender
                if sender != nil { state.waiting[id] = Waiting(wake: wake) }
                return sender != nil
            }
        }
        guard let id = opened, let sender else { throw ProbeFailure.notConnected }
        defer {
            confirmations.close(id)
            state.withLock { _ = $0.waiting.removeValue(forKey: id) }
        }
        var writer = XMPPWriter()
        for member in members { writer.presence(type: "probe", to: member.rawValue) }
        let question = writer.bytes + IQ.ping(id: id)
        // Noted before it is written: the ping's answer cannot come first.
        confirmations.written(id, bytes: question.count, members: members.count)
        do { try await sender.send(question) } catch { throw ProbeFailure.notConnected }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            wake.fulfil(.timedOut)
        }
        defer { timer.cancel() }
        let outcome = await withTaskCancellationHandler {
            await wake.value()
        } onCancel: {
            wake.fulfil(.cancelled)
        }
        switch outcome {
        case .finished, .timedOut: return state.withLock { $0.waiting[id]?.answers ?? [:] }
        case .closed: throw ProbeFailure.notConnected
        case .cancelled: throw CancellationError()
        }
    }

    /// A member of a probe batch has a final answer.
    func answer(_ presence: UserPresence, for member: BareJID, round: String) {
        state.withLock { $0.waiting[round]?.answers[member] = presence }
    }

    /// Every member of a probe batch has a final answer.
    func finish(round: String) {
        let wake = state.withLock { $0.waiting[round]?.wake }
        wake?.fulfil(.finished)
    }
}
