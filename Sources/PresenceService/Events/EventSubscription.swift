import NIOCore
import PresenceStore

/// One open change stream: the JIDs it watches and, for each, the latest change not written yet.
///
/// Pending changes are coalesced per JID: a reader that stalls holds at most one entry per watched user, never
/// a queue of every change, and what it reads when it resumes is each user's answer as it is then.
final class EventSubscription: Sendable {
    /// The JIDs watched; nil for every change of every user.
    let watched: Set<BareJID>?
    /// The connection, closed when a write stays blocked past the limit.
    let channel: (any Channel)?
    private let state = Locked(State())
    /// Signals that something may be ready; iterated only by the task writing the stream.
    let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    private struct State {
        /// The latest change sequence number per JID with a change not written yet.
        var pending: [BareJID: UInt64] = [:]
        var heartbeatDue = false
        var finished = false
        /// When the write in progress began; nil between writes.
        var writeStartedAt: ContinuousClock.Instant?
    }

    init(watched: Set<BareJID>?, channel: (any Channel)?) {
        self.watched = watched
        self.channel = channel
        (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func watches(_ key: BareJID) -> Bool { watched?.contains(key) ?? true }

    /// A watched user changed (change number `sequence`).
    func mark(_ key: BareJID, sequence: UInt64) {
        state.withLock { $0.pending[key] = sequence }
        wake.yield()
    }

    /// Whether `key` has a change not written yet.
    func isPending(_ key: BareJID) -> Bool {
        state.withLock { $0.pending[key] != nil }
    }

    /// The stream has been idle for a heartbeat interval.
    func heartbeat() {
        state.withLock { $0.heartbeatDue = true }
        wake.yield()
    }

    /// Ends the stream (the service is shutting down).
    func finish() {
        state.withLock { $0.finished = true }
        wake.finish()
    }

    /// What to write next: the pending changes in the order they happened, and whether a heartbeat is due.
    /// Waits on `iterator` (of ``wakeups``) until there is something; nil once the stream is finished.
    func next(
        _ iterator: inout AsyncStream<Void>.Iterator
    ) async -> (changes: [(key: BareJID, sequence: UInt64)], heartbeat: Bool)? {
        while true {
            let taken = state.withLock { state -> (changes: [(key: BareJID, sequence: UInt64)], heartbeat: Bool)? in
                guard !state.finished else { return nil }
                let changes = state.pending.map { (key: $0.key, sequence: $0.value) }.sorted {
                    $0.sequence < $1.sequence
                }
                let heartbeat = state.heartbeatDue && changes.isEmpty
                state.pending.removeAll(keepingCapacity: true)
                state.heartbeatDue = false
                return (changes, heartbeat)
            }
            guard let taken else { return nil }
            if !taken.changes.isEmpty || taken.heartbeat { return taken }
            guard await iterator.next() != nil else { return nil }
        }
    }

    /// Brackets a write, for the stalled-reader check.
    func writing(_ started: Bool) {
        state.withLock { $0.writeStartedAt = started ? .now : nil }
    }

    /// Whether a write has been blocked for longer than `limit`.
    func isStalled(longerThan limit: Duration, now: ContinuousClock.Instant) -> Bool {
        state.withLock { state in state.writeStartedAt.map { now - $0 > limit } ?? false }
    }
}
