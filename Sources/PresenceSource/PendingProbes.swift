import PresenceModel
import PresenceStore
import XMPPClient
import XMPPStream

/// The probes sent on behalf of lookups and not answered yet, and the session they go out on.
///
/// Each batch is a set of `<presence type='probe'/>` stanzas followed by a ping in the same write: the server
/// handles one client's stanzas in order, so the ping's answer comes after every presence it sent in answer to
/// the probes (the ``SnapshotBarrier`` argument, for a handful of members instead of the whole roster).
final class PendingProbes: Sendable {
    typealias Answers = [BareJID: UserPresence]

    private struct Batch {
        let promise: Promise<Result<Answers, any Error>>
        /// The answers as they arrived, in case the storage evicts one before the batch completes.
        var captured: Answers = [:]
    }

    private struct State {
        var sender: XMPPStanzaSender?
        var barrier = SnapshotBarrier()
        var batches: [String: Batch] = [:]
        var issued = 0
    }

    static let idPrefix = "probe-"

    private let state = Locked(State())

    /// A session is up: probes may go out on it.
    func open(_ sender: XMPPStanzaSender) {
        state.withLock { $0.sender = sender }
    }

    /// The session ended: no more probes, and every batch still waiting fails as not connected.
    func close() {
        let waiting = state.withLock { state in
            state.sender = nil
            state.barrier = SnapshotBarrier()
            defer { state.batches = [:] }
            return state.batches.values.map(\.promise)
        }
        for promise in waiting { promise.fulfil(.failure(ProbeFailure.notConnected)) }
    }

    var isOpen: Bool { state.withLock { $0.sender != nil } }

    /// Probes `members` and waits for the batch to complete (see ``complete(id:storage:at:)``).
    func probe(_ members: Set<BareJID>) async throws -> Answers {
        let promise = Promise<Result<Answers, any Error>>()
        let opened: (id: String, sender: XMPPStanzaSender)? = state.withLock { state in
            guard let sender = state.sender else { return nil }
            state.issued += 1
            let id = "\(Self.idPrefix)\(state.issued)"
            state.barrier.begin(id: id, members: members)
            state.batches[id] = Batch(promise: promise)
            return (id, sender)
        }
        guard let (id, sender) = opened else { throw ProbeFailure.notConnected }
        var writer = XMPPWriter()
        for member in members { writer.presence(type: "probe", to: member.rawValue) }
        var bytes = writer.bytes
        bytes += IQ.ping(id: id)
        do { try await sender.send(bytes) } catch {
            abandon(id)
            throw ProbeFailure.notConnected
        }
        let result = await withTaskCancellationHandler {
            await promise.value()
        } onCancel: {
            promise.fulfil(.failure(CancellationError()))
        }
        abandon(id)
        return try result.get()
    }

    /// Forgets a batch nobody waits for any more (answered, cancelled or never sent).
    private func abandon(_ id: String) {
        state.withLock { state in
            state.batches[id] = nil
            _ = state.barrier.complete(id: id)
        }
    }

    /// An update the session applied: an answer to every open batch that probed its sender.
    func record(_ update: PresenceUpdate, at time: PresenceTime) {
        state.withLock { state in
            guard !state.batches.isEmpty else { return }
            state.barrier.record(update)
            let bare = update.from.bare
            for id in state.batches.keys where state.barrier.waits(id: id, for: bare) {
                state.batches[id]!.captured[bare, default: UserPresence()].apply(update, receivedAt: time)
            }
        }
    }

    /// The ping closing batch `id` was answered: makes the storage agree with the answers (a member that sent
    /// none is offline, a resource not reported is gone) and hands each member's presence to the lookups. A
    /// member taken off the roster meanwhile is left alone: the storage forgot them on purpose.
    /// Returns false when `id` is not a probe batch.
    func complete(
        id: String, storage: any MemoryStorage, at now: PresenceTime, isWatched: (BareJID) -> Bool
    ) -> Bool {
        guard id.hasPrefix(Self.idPrefix) else { return false }
        let finished = state.withLock { state -> (batch: Batch, members: Set<BareJID>, seen: [BareJID: Set<String>])? in
            guard let batch = state.batches.removeValue(forKey: id), let done = state.barrier.complete(id: id)
            else { return nil }
            return (batch, done.members, done.seen)
        }
        guard let finished else { return true }
        let members = finished.members.filter(isWatched)
        SnapshotReconciliation.apply(members: members, reported: finished.seen, to: storage, at: now)
        var answers: Answers = [:]
        for member in members {
            if case .present(let stored) = storage.lookup(member), stored.status != nil {
                answers[member] = stored
            } else if let captured = finished.batch.captured[member], captured.status != nil {
                answers[member] = captured
            } else {
                answers[member] = UserPresence(
                    applying: PresenceUpdate(from: JID(bare: member, resource: nil), availability: .unavailable),
                    receivedAt: now)
            }
        }
        finished.batch.promise.fulfil(.success(answers))
        return true
    }
}
