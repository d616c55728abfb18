import PresenceModel

/// The XMPP server reads the watcher's connection at a limited rate, so its questions about members (XEP-0012
/// last activity, probes) go no faster than that: what a shipped configuration does to any client, and what
/// makes an organisation's snapshot take minutes instead of seconds.
///
/// Seen from the watcher as answers arriving at a steady, low rate of question bytes while more questions wait
/// (``ReadRateLimitDetector``). The likely settings are named in ``explanation``; the Deploying guide has the
/// lines that exempt the watcher account.
public struct ServerReadLimit: Sendable, Hashable {
    /// Question bytes the server answers a second.
    public var bytesPerSecond: Int
    /// Questions it answers a second.
    public var answersPerSecond: Double
    /// Questions waiting to be sent.
    public var waiting: Int
    /// When the limit was first seen in this session.
    public var since: PresenceTime

    public init(bytesPerSecond: Int, answersPerSecond: Double, waiting: Int, since: PresenceTime) {
        self.bytesPerSecond = bytesPerSecond
        self.answersPerSecond = answersPerSecond
        self.waiting = waiting
        self.since = since
    }

    /// What is happening and the settings that likely cause it: one wording for the log, `/v1/stats` and
    /// `/readyz`.
    public var explanation: String {
        let rate = answersPerSecond < 10 ? "\((answersPerSecond * 10).rounded() / 10)" : "\(Int(answersPerSecond))"
        return """
            the XMPP server reads the watcher's connection at about \(bytesPerSecond) bytes a second (\(rate) \
            questions a second, \(waiting) waiting): a client rate limit, likely ejabberd's c2s_shaper (the shipped \
            shaper "normal" is 3000 bytes a second) or Prosody's mod_limits (the shipped c2s rate is 10kb/s); \
            exempt the watcher account (see "Server rate limits" in the Deploying guide)
            """
    }
}
