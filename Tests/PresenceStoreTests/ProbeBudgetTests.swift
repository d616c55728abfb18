import PresenceStore
import Testing

@Suite("The probe budget and the refill latency histogram")
struct ProbeBudgetTests {
    /// How many of `attempts` probes the budget allows at `instant`.
    private func allowed(_ attempts: Int, from budget: inout ProbeBudget, at instant: ContinuousClock.Instant) -> Int {
        (0 ..< attempts).count { _ in budget.take(at: instant) }
    }

    @Test func aBurstOfOneSecondsWorthIsAllowedThenTheBudgetRefillsAtItsRate() {
        let start = ContinuousClock.now
        var budget = ProbeBudget(perSecond: 10, now: start)
        let burst = allowed(15, from: &budget, at: start)
        #expect(burst == 10, "one second's worth at once")
        let halfAProbeLater = allowed(1, from: &budget, at: start + .milliseconds(50))
        #expect(halfAProbeLater == 0, "half a probe has come back, not one")
        let halfASecondLater = allowed(15, from: &budget, at: start + .milliseconds(550))
        #expect(halfASecondLater == 5)
        let aMinuteLater = allowed(30, from: &budget, at: start + .seconds(60))
        #expect(aMinuteLater == 10, "never more than a burst")
    }

    @Test func aBudgetBelowOnePerSecondStillAllowsOneProbe() {
        let start = ContinuousClock.now
        var budget = ProbeBudget(perSecond: 0.5, now: start)
        let first = allowed(1, from: &budget, at: start)
        let oneSecondLater = allowed(1, from: &budget, at: start + .seconds(1))
        let twoSecondsLater = allowed(1, from: &budget, at: start + .seconds(2))
        #expect(first == 1 && oneSecondLater == 0 && twoSecondsLater == 1)
    }

    @Test func latencyQuantilesAreTheUpperBoundsOfTheirBuckets() {
        var histogram = LatencyHistogram()
        #expect(histogram.quantile(0.5) == nil)
        for _ in 0 ..< 98 { histogram.record(.microseconds(300)) }
        histogram.record(.milliseconds(20))
        histogram.record(.seconds(30))
        #expect(histogram.quantile(0.5) == 0.0005)
        #expect(histogram.quantile(0.99) == 0.025)
        #expect(histogram.quantile(1) == .infinity)
        #expect(histogram.count == 100)
    }
}
