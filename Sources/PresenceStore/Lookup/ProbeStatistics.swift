/// What refilling by probe has cost so far: probes sent and how each ended, lookups that shared a probe already
/// in flight, and how long answered probes took.
public struct ProbeStatistics: Hashable, Sendable {
    /// Users probed (one probe stanza each).
    public var sent = 0
    /// Probed users the server answered in time.
    public var answered = 0
    /// Probed users with no answer within the timeout.
    public var timedOut = 0
    /// Probed users whose session ended before the answer.
    public var failed = 0
    /// Users not probed because the budget was spent.
    public var refusedByBudget = 0
    /// Lookups that waited for a probe another lookup had already sent (single flight).
    public var joinedInFlight = 0
    /// Lookups that wanted a probe while no session was up.
    public var notConnected = 0
    /// How long answered probes took, from sending to the stored answer.
    public var latency = LatencyHistogram()

    public init() {}
}

/// Durations counted in fixed buckets (as a Prometheus histogram): cheap to record, and quantiles good to a
/// bucket's width.
public struct LatencyHistogram: Hashable, Sendable {
    /// Upper bounds of the buckets, in seconds; a last, unbounded bucket follows.
    public static let bounds: [Double] = [
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ]
    /// Counts per bucket, the unbounded one last.
    public private(set) var counts = [Int](repeating: 0, count: bounds.count + 1)
    public private(set) var count = 0
    /// The sum of all durations, in seconds.
    public private(set) var sum = 0.0

    public init() {}

    public mutating func record(_ duration: Duration) {
        let seconds = duration.seconds
        let bucket = Self.bounds.firstIndex { seconds <= $0 } ?? Self.bounds.count
        counts[bucket] += 1
        count += 1
        sum += seconds
    }

    /// The upper bound of the bucket holding quantile `q` (0...1), in seconds; nil before any record, infinity
    /// when it lies beyond the last bound.
    public func quantile(_ q: Double) -> Double? {
        guard count > 0 else { return nil }
        let rank = max(1, Int((q * Double(count)).rounded(.up)))
        var seen = 0
        for (bucket, n) in counts.enumerated() {
            seen += n
            if seen >= rank { return bucket < Self.bounds.count ? Self.bounds[bucket] : .infinity }
        }
        return .infinity
    }
}

extension Duration {
    /// The duration in seconds, as a floating-point number.
    package var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }
}
