import Foundation

/// The disk tier's flusher: one thread of its own (the flush blocks on the disk, which the cooperative pool must
/// never do) that runs the flush every interval, at once when asked, and stops when told.
final class FlushScheduler: Sendable {
    private let interval: Duration
    private let condition = NSCondition()
    private let state = Locked(State())

    private struct State {
        var soon = false
        var stopping = false
        var thread: Thread?
        var finished = false
    }

    init(interval: Duration) { self.interval = interval }

    /// Starts the thread; `flush` runs on it until ``stop()``.
    func start(_ flush: @escaping @Sendable () -> Bool) {
        let thread = Thread { [self] in
            while waitForTurn() { _ = flush() }
            condition.lock()
            state.withLock { $0.finished = true }
            condition.broadcast()
            condition.unlock()
        }
        thread.name = "presence-disk-flush"
        state.withLock { $0.thread = thread }
        thread.start()
    }

    /// Waits until the interval is up or a flush is asked for; false once stopping.
    private func waitForTurn() -> Bool {
        let deadline = Date(timeIntervalSinceNow: interval.seconds)
        condition.lock()
        defer { condition.unlock() }
        while true {
            let (soon, stopping) = state.withLock { state in
                defer { state.soon = false }
                return (state.soon, state.stopping)
            }
            if stopping { return false }
            if soon { return true }
            if !condition.wait(until: deadline) { return true }
        }
    }

    /// Asks for a flush now (the dirty threshold was reached).
    func flushSoon() {
        condition.lock()
        state.withLock { $0.soon = true }
        condition.signal()
        condition.unlock()
    }

    /// Stops the thread and waits for its flush in progress to end.
    func stop() {
        condition.lock()
        defer { condition.unlock() }
        let started = state.withLock { state -> Bool in
            state.stopping = true
            return state.thread != nil
        }
        condition.broadcast()
        guard started, Thread.current.name != "presence-disk-flush" else { return }
        while !state.withLock({ $0.finished }) { condition.wait() }
    }
}
