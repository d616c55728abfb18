/// Tells, from how fast the server answers the session's questions while more of them wait, that it reads the
/// watcher's connection at a limited rate: ejabberd's `c2s_shaper` (its shipped `normal` shaper, 3,000 bytes a
/// second) or Prosody's `mod_limits` (its shipped `c2s` rate, 10 kB a second).
///
/// A rate limit shows as answers arriving at a steady rate of *question bytes* a second for as long as questions
/// wait to be sent (last-activity questions, or lookups' probes the server has not read). Once questions have waited ``span``, the detector measures the last ``measured`` of answers
/// (after a shaper's initial burst) and reports slow answers below ``ceiling`` bytes a second; whether the rate
/// is a shipped limit's is ``ServerReadLimit/likelySetting``'s to say, for a server short of CPU answers slowly
/// too. It also says how many questions to keep in flight: once the oldest has waited a second, about one second
/// of the answers it sees, so a shaped connection holds a second of questions rather than a backlog that every
/// later stanza waits behind.
struct ReadRateLimitDetector {
    /// A limit met: the rate the server reads questions at, and since when.
    struct Limit: Hashable, Sendable {
        /// Question bytes the server answered a second, over the last ``ReadRateLimitDetector/span``.
        var bytesPerSecond: Int
        /// Questions answered a second, over the same span.
        var answersPerSecond: Double
        /// Questions waiting to be sent, and probes written that the server has not read for a quarter of a second.
        var waiting: Int
        var since: ContinuousClock.Instant
    }

    /// What changed at an evaluation.
    enum Change: Equatable {
        case began(Limit)
        case ended
    }

    /// How long questions must have waited before their answers are judged.
    static let span: Duration = .seconds(3)
    /// How far back answers are counted: shorter than ``span``, so a shaper's initial burst is behind it.
    static let measured: Duration = .seconds(2)
    /// The answer rate, in question bytes a second, under which a backlog is a limit rather than a busy server.
    static let ceiling = 65_536
    /// The fewest questions kept in flight whatever the rate.
    static let minimumInFlight = 16

    private static let bucketWidth: Duration = .milliseconds(100)
    private static let bucketCount = Int(measured / bucketWidth)

    /// Answers in the last ``span``, by bucket of ``bucketWidth``: (bucket number, question bytes, answers).
    private var buckets: [(number: Int64, bytes: Int, answers: Int)] = []
    private let origin: ContinuousClock.Instant
    private var backloggedSince: ContinuousClock.Instant?
    private(set) var limit: Limit?

    init(origin: ContinuousClock.Instant = .now) {
        self.origin = origin
    }

    /// The server read `answers` questions of `bytes` bytes together: a last-activity question answered, or a
    /// round of probes whose ping was answered.
    mutating func answered(bytes: Int, answers: Int = 1, at now: ContinuousClock.Instant) {
        let number = bucket(of: now)
        if let last = buckets.last, last.number == number {
            buckets[buckets.count - 1].bytes += bytes
            buckets[buckets.count - 1].answers += answers
        } else {
            buckets.append((number, bytes, answers))
            let oldest = number - Int64(Self.bucketCount)
            buckets.removeAll { $0.number <= oldest }
        }
    }

    /// Looks at the session now, with `waiting` questions not sent yet; returns what changed.
    mutating func evaluate(at now: ContinuousClock.Instant, waiting: Int) -> Change? {
        guard waiting > 0 else {
            backloggedSince = nil
            return clear()
        }
        let since = backloggedSince ?? now
        backloggedSince = since
        guard now - since >= Self.span else { return nil }
        let (bytes, answers) = answeredInSpan(endingAt: now)
        // A rate still falling is a burst running out (a shaper lets its bucket's worth through at once, for as
        // long as the watcher keeps up): judged once the last second answers at least three quarters of the one
        // before it.
        if limit == nil {
            let last = answeredInSpan(endingAt: now, over: .seconds(1)).bytes
            let before = answeredInSpan(endingAt: now - .seconds(1), over: .seconds(1)).bytes
            guard last * 4 >= before * 3 else { return nil }
        }
        let seconds = Self.measured / .seconds(1)
        let bytesPerSecond = Int(Double(bytes) / seconds)
        guard bytesPerSecond < Self.ceiling else { return clear() }
        let current = Limit(
            bytesPerSecond: bytesPerSecond, answersPerSecond: Double(answers) / seconds, waiting: waiting,
            since: limit?.since ?? since)
        defer { limit = current }
        return limit == nil ? .began(current) : nil
    }

    /// How many questions to keep in flight: `maximum` while the oldest in flight (sent at `oldest`) has waited
    /// less than a second, else about one second of the answers seen, between ``minimumInFlight`` and `maximum`.
    func inFlightLimit(at now: ContinuousClock.Instant, oldest: ContinuousClock.Instant?, maximum: Int) -> Int {
        guard let oldest, now - oldest > .seconds(1) else { return maximum }
        let answers = answeredInSpan(endingAt: now).answers
        let perSecond = Int((Double(answers) / (Self.measured / .seconds(1))).rounded(.up))
        return min(maximum, max(Self.minimumInFlight, perSecond))
    }

    private mutating func clear() -> Change? {
        guard limit != nil else { return nil }
        limit = nil
        return .ended
    }

    private func bucket(of instant: ContinuousClock.Instant) -> Int64 {
        Int64((instant - origin) / Self.bucketWidth)
    }

    private func answeredInSpan(
        endingAt now: ContinuousClock.Instant, over span: Duration = measured
    ) -> (bytes: Int, answers: Int) {
        let newest = bucket(of: now)
        let oldest = newest - Int64(span / Self.bucketWidth)
        var bytes = 0
        var answers = 0
        for bucket in buckets where bucket.number > oldest && bucket.number <= newest {
            bytes += bucket.bytes
            answers += bucket.answers
        }
        return (bytes, answers)
    }
}
