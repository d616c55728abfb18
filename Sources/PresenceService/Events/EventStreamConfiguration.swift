/// The limits of `GET /v1/presence/events`, each with a default and a `presence serve` flag.
public struct EventStreamConfiguration: Hashable, Sendable {
    /// Most `jid` parameters one stream may watch (`--events-max-jids`).
    public var maxJIDsPerStream: Int
    /// Most streams open at once (`--events-max-streams`); one more is answered 503.
    public var maxStreams: Int
    /// How often an idle stream gets a comment line, so proxies keep it open (`--events-heartbeat`).
    public var heartbeat: Duration
    /// How long one write may stay blocked on a reader that does not read before the stream is closed
    /// (`--events-write-timeout`).
    public var writeTimeout: Duration
    /// How many recent changes are kept for `Last-Event-ID` resumes; an older id gets a fresh snapshot.
    public var history: Int
    /// The shortest wait a client is told (`retry:`) before it reconnects a stream that broke; each stream is
    /// told a wait between this and twice this, drawn at random (`--events-retry`).
    public var retry: Duration

    public static let defaultMaxJIDsPerStream = 10_000
    public static let defaultMaxStreams = 10_000
    public static let defaultHeartbeat: Duration = .seconds(15)
    public static let defaultWriteTimeout: Duration = .seconds(30)
    public static let defaultHistory = 65_536
    public static let defaultRetry: Duration = .seconds(1)

    public init(
        maxJIDsPerStream: Int = defaultMaxJIDsPerStream, maxStreams: Int = defaultMaxStreams,
        heartbeat: Duration = defaultHeartbeat, writeTimeout: Duration = defaultWriteTimeout,
        history: Int = defaultHistory, retry: Duration = defaultRetry
    ) {
        self.maxJIDsPerStream = max(maxJIDsPerStream, 1)
        self.maxStreams = max(maxStreams, 1)
        self.heartbeat = heartbeat
        self.writeTimeout = writeTimeout
        self.history = max(history, 1)
        self.retry = max(retry, .milliseconds(1))
    }
}
