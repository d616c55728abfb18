import PresenceStore

/// Refill by probe in `/v1/stats` (`probes`): what the lookups asked of the presence server and how it went.
/// Null when the service has no probing source.
public struct ProbeReport: Hashable, Sendable, Decodable, JSONDocument {
    /// The policy a request without `policy=` gets.
    public var defaultPolicy: String
    public var timeoutMilliseconds: Double
    public var probesPerSecond: Double
    public var sent: Int
    public var answered: Int
    public var timedOut: Int
    public var failed: Int
    public var refusedByBudget: Int
    public var joinedInFlight: Int
    public var notConnected: Int
    /// Upper bounds of the latency buckets holding the median and the 99th percentile of answered probes (null
    /// before the first answer, or past the last bucket, 10 s).
    public var latencyP50Milliseconds: Double?
    public var latencyP99Milliseconds: Double?

    public init(_ statistics: ProbeStatistics, defaultPolicy: LookupPolicy, configuration: PresenceLookup.Configuration)
    {
        self.defaultPolicy = defaultPolicy.rawValue
        timeoutMilliseconds = configuration.probeTimeout.seconds * 1000
        probesPerSecond = configuration.probesPerSecond
        sent = statistics.sent
        answered = statistics.answered
        timedOut = statistics.timedOut
        failed = statistics.failed
        refusedByBudget = statistics.refusedByBudget
        joinedInFlight = statistics.joinedInFlight
        notConnected = statistics.notConnected
        latencyP50Milliseconds = statistics.latency.quantile(0.5).flatMap { $0.isFinite ? $0 * 1000 : nil }
        latencyP99Milliseconds = statistics.latency.quantile(0.99).flatMap { $0.isFinite ? $0 * 1000 : nil }
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("answered"); writer.int(answered)
            writer.key("defaultPolicy"); writer.string(defaultPolicy)
            writer.key("failed"); writer.int(failed)
            writer.key("joinedInFlight"); writer.int(joinedInFlight)
            writer.key("latencyP50Milliseconds"); writer.double(latencyP50Milliseconds)
            writer.key("latencyP99Milliseconds"); writer.double(latencyP99Milliseconds)
            writer.key("notConnected"); writer.int(notConnected)
            writer.key("probesPerSecond"); writer.double(probesPerSecond)
            writer.key("refusedByBudget"); writer.int(refusedByBudget)
            writer.key("sent"); writer.int(sent)
            writer.key("timedOut"); writer.int(timedOut)
            writer.key("timeoutMilliseconds"); writer.double(timeoutMilliseconds)
        }
    }
}
