/// The probes a lookup may still send: a token bucket refilled at a steady rate and holding at most one
/// second's worth, so a burst of lookups cannot turn into a burst of probes larger than the server was promised.
package struct ProbeBudget {
    package let perSecond: Double
    private var tokens: Double
    private var refilledAt: ContinuousClock.Instant

    package init(perSecond: Double, now: ContinuousClock.Instant = .now) {
        self.perSecond = perSecond
        tokens = max(perSecond, 1)
        refilledAt = now
    }

    /// A second's worth of probes, at least one.
    package var capacity: Double { max(perSecond, 1) }

    /// Takes one probe from the budget; false when it is spent.
    package mutating func take(at now: ContinuousClock.Instant) -> Bool {
        let elapsed = now - refilledAt
        if elapsed > .zero {
            tokens = min(capacity, tokens + elapsed.seconds * perSecond)
            refilledAt = now
        }
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
