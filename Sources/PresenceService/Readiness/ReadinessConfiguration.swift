/// When a replica counts as ready to take traffic, and what it does with queries while it is not.
public struct ReadinessConfiguration: Hashable, Sendable {
    /// What queries get while the replica is not ready.
    public enum WhenNotReady: String, CaseIterable, Hashable, Sendable {
        /// Answered as usual, from what the store holds, with `live: false`: a single instance keeps showing
        /// the last statuses it knew.
        case answer
        /// `503 not-ready` for the presence API and the change streams, so a balancer that only learns from
        /// answers (nginx's passive checks) sends them to a replica that is ready. A request with the header
        /// ``acceptStaleHeader`` is answered all the same: the balancer's fallback when no replica is ready.
        case refuse
    }

    /// How long a replica that was live stays ready after it stops being live (the XMPP session ended, or the
    /// snapshot after a reconnect is not complete yet): a server restart or a short network cut does not take
    /// every replica out of the balancer at once.
    public var grace: Duration
    public var whenNotReady: WhenNotReady

    public static let defaultGrace: Duration = .seconds(10)

    /// A request header that asks for an answer even from a replica that is not ready.
    public static let acceptStaleHeader = "X-Presence-Accept-Stale"

    public init(grace: Duration = defaultGrace, whenNotReady: WhenNotReady = .answer) {
        self.grace = grace
        self.whenNotReady = whenNotReady
    }
}
