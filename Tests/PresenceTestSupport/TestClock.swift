import PresenceStore

/// A `Clock` that stands still until the test moves it: a timer under test sleeps on it, the test advances it by
/// exact amounts and asserts what the timer did at each, in milliseconds and without waiting.
///
/// A timer runs in a task of its own, so after a move the test waits until the timer is asleep again
/// (``waitUntilSleeping(_:)``) before it looks: by then the timer has done everything the move was due to cause.
package final class TestClock: Clock, Sendable {
    package struct Instant: InstantProtocol {
        /// Time since the clock's start.
        package var offset: Duration

        package func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        package func duration(to other: Instant) -> Duration { other.offset - offset }
        package static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        let id: UInt64
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Sleeper] = []
        /// Sleeps begun and not yet registered as sleepers or ended.
        var starting: Set<UInt64> = []
        /// Sleeps cancelled before they were registered: they end as soon as they are.
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0
    }

    private let state = Locked(State())

    package init() {}

    package var now: Instant { state.withLock { $0.now } }

    package var minimumResolution: Duration { .zero }

    package func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            state.starting.insert(state.nextID)
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    state.starting.remove(id)
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else {
                    // Not registered yet: it ends as soon as it is. Otherwise it has been woken already.
                    if state.starting.contains(id) { state.cancelled.insert(id) }
                    return nil
                }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward by `duration` and wakes every sleeper whose deadline has come, earliest first. The
    /// woken read the clock at its new time: a test of a periodic timer moves it one period at a time.
    package func advance(by duration: Duration) {
        let due = state.withLock { state -> [Sleeper] in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// How many tasks sleep on the clock now.
    package var sleeping: Int { state.withLock { $0.sleepers.count } }

    /// Waits (on real time, yielding) until at least `count` tasks sleep on the clock: the timers under test have
    /// run on from the last move and wait for the next one. False after ``TestDeadline/condition``.
    package func waitUntilSleeping(_ count: Int = 1) async -> Bool {
        let deadline = ContinuousClock.now + TestDeadline.condition
        while sleeping < count {
            guard ContinuousClock.now < deadline, !Task.isCancelled else { return false }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return true
    }
}
