/// A monotonic clock read as the time elapsed since it was made, over any Swift `Clock` that measures in
/// `Duration`: `ContinuousClock` in the running service, a clock a test moves by hand in the tests.
///
/// A timer that compares moments and sleeps between them (a stream's heartbeat, the idle sweep) takes one instead
/// of reading `ContinuousClock` itself, so that a test drives it in milliseconds and asserts its exact bounds
/// without waiting for them. Moments are `Duration`s since the clock's start: comparable and storable without
/// knowing which clock made them, but only with moments of the same `ElapsedClock` value: each starts at its own
/// zero.
package struct ElapsedClock: Sendable {
    private let read: @Sendable () -> Duration
    private let wait: @Sendable (Duration) async throws -> Void

    /// Elapsed time on `clock`, from now.
    package init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let origin = clock.now
        read = { origin.duration(to: clock.now) }
        wait = { deadline in try await clock.sleep(until: origin.advanced(by: deadline), tolerance: nil) }
    }

    /// Elapsed time on the system's monotonic clock (`ContinuousClock`, which keeps counting while the machine
    /// sleeps).
    package static var continuous: ElapsedClock { ElapsedClock(ContinuousClock()) }

    /// The time elapsed since the clock was made.
    package var now: Duration { read() }

    /// Sleeps until the clock reads `deadline`; throws `CancellationError` when the task is cancelled first.
    package func sleep(until deadline: Duration) async throws { try await wait(deadline) }

    /// Sleeps for `duration` from now.
    package func sleep(for duration: Duration) async throws { try await wait(now + duration) }
}
