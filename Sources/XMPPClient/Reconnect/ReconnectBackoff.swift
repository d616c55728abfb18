/// How long to wait before the next connection attempt: exponential growth from ``initial`` to ``maximum``
/// with jitter, so that many clients cut off by one server restart do not all come back at the same instant.
///
/// Each delay is drawn uniformly between half and all of the current step ("equal jitter"), so the wait never
/// collapses to zero. A login that succeeded resets the steps; a permanent failure (a refused password, a
/// certificate that does not verify) waits the maximum, so a wrong password never becomes a retry storm.
public struct ReconnectBackoff: Sendable, Hashable {
    public var initial: Duration
    public var maximum: Duration
    public var multiplier: Double
    private var step: Duration?

    public static let defaultInitial: Duration = .seconds(1)
    public static let defaultMaximum: Duration = .seconds(60)

    public init(initial: Duration = defaultInitial, maximum: Duration = defaultMaximum, multiplier: Double = 2) {
        self.initial = initial
        self.maximum = max(initial, maximum)
        self.multiplier = max(1, multiplier)
    }

    /// The connection logged in: the next failure starts from ``initial`` again.
    public mutating func reset() { step = nil }

    /// The wait before the next attempt after a failure.
    public mutating func nextDelay(permanentFailure: Bool = false) -> Duration {
        // Not the generic version with a `SystemRandomNumberGenerator`: ThreadSanitizer crashes on an inout
        // access to that zero-sized value (Swift 6.3), and `Double.random(in:)` uses the same generator.
        let current = advance(permanentFailure: permanentFailure)
        return current / 2 + (current / 2) * Double.random(in: 0 ... 1)
    }

    /// The wait before the next attempt, with the jitter drawn from `generator`.
    public mutating func nextDelay(
        permanentFailure: Bool = false, using generator: inout some RandomNumberGenerator
    ) -> Duration {
        let current = advance(permanentFailure: permanentFailure)
        return current / 2 + (current / 2) * Double.random(in: 0 ... 1, using: &generator)
    }

    /// The next step of the exponential sequence.
    private mutating func advance(permanentFailure: Bool) -> Duration {
        let current: Duration
        if permanentFailure {
            current = maximum
        } else if let step {
            current = min(maximum, step * multiplier)
        } else {
            current = initial
        }
        step = current
        return current
    }
}
