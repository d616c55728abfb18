import NIOCore
import PresenceStore

/// One open change stream: the JIDs it watches and, for each, the latest change not written yet.
///
/// Pending changes are coalesced per JID: a reader that stalls holds at most one entry per watched user, never
/// a queue of every change, and what it reads when it resumes is each user's answer as it is then. Whoever writes
/// the stream is told there is something to write through `wake`, once until it next calls ``take()``: a burst of
/// changes costs the writer one wake-up, not one per change.
final class EventSubscription: Sendable {
    /// The JIDs watched; nil for every change of every user.
    let watched: WatchedJIDs?
    /// The connection: the hub closes it to end the stream at once (a replica that stops being ready).
    let channel: (any Channel)?
    /// The hub's clock: when something was last taken decides when a heartbeat is due.
    private let clock: ElapsedClock
    private let state: Locked<State>

    private struct State {
        /// The latest change sequence number per JID with a change not written yet.
        var pending: [BareJID: UInt64] = [:]
        var heartbeatDue = false
        var finished = false
        /// Whether `wake` was called since the last ``take()``.
        var woken = false
        /// Tells the writer there is something to take; dropped when the stream finishes, so that nothing holds
        /// the writer after its stream is over.
        var wake: (@Sendable () -> Void)?
        /// When something was last taken to be written (a change or a heartbeat), or the stream opened, on
        /// ``clock``.
        var lastTaken: Duration
    }

    /// Something to write is to be signalled by `wake` (called on whatever thread made the change: the writer
    /// hops to its own).
    init(
        watched: WatchedJIDs?, channel: (any Channel)?, clock: ElapsedClock, wake: @escaping @Sendable () -> Void
    ) {
        self.watched = watched
        self.channel = channel
        self.clock = clock
        state = Locked(State(wake: wake, lastTaken: clock.now))
    }

    func watches(_ key: BareJID) -> Bool { watched?.contains(key) ?? true }

    /// A watched user changed (change number `sequence`).
    func mark(_ key: BareJID, sequence: UInt64) {
        signal { state in
            state.pending[key] = sequence
            return true
        }
    }

    /// Whether `key` has a change not written yet.
    func isPending(_ key: BareJID) -> Bool {
        state.withLock { $0.pending[key] != nil }
    }

    /// A heartbeat is due if nothing was taken to be written since `cutoff`.
    func heartbeat(ifIdleSince cutoff: Duration) {
        signal { state in
            guard state.lastTaken < cutoff else { return false }
            state.heartbeatDue = true
            return true
        }
    }

    /// Ends the stream (the service is shutting down, or the reader stopped reading): the writer is woken to end
    /// the response.
    func finish() {
        let wake = state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.finished else { return nil }
            state.finished = true
            defer { state.wake = nil }
            return state.wake
        }
        wake?()
    }

    /// Whether the stream is over: whatever is being written should stop and the response end.
    var isFinished: Bool { state.withLock { $0.finished } }

    /// What to write now: the pending changes in the order they happened, and whether a heartbeat is due (only
    /// when no change is). Nil once the stream is finished.
    func take() -> (changes: [(key: BareJID, sequence: UInt64)], heartbeat: Bool)? {
        state.withLock { state in
            state.woken = false
            guard !state.finished else { return nil }
            var changes = state.pending.map { (key: $0.key, sequence: $0.value) }
            if changes.count > 1 { changes.sort { $0.sequence < $1.sequence } }
            let heartbeat = state.heartbeatDue && changes.isEmpty
            state.pending.removeAll(keepingCapacity: state.pending.count <= 64)
            state.heartbeatDue = false
            if heartbeat || !changes.isEmpty { state.lastTaken = clock.now }
            return (changes, heartbeat)
        }
    }

    /// Applies `change` under the lock and wakes the writer if it says there is something to write and the writer
    /// has not been woken since its last ``take()``.
    private func signal(_ change: (inout State) -> Bool) {
        let wake = state.withLock { state -> (@Sendable () -> Void)? in
            guard change(&state), !state.woken, !state.finished else { return nil }
            state.woken = true
            return state.wake
        }
        wake?()
    }
}
