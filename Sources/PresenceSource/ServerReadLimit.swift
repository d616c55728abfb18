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

    /// The shipped limit whose rate this is: ejabberd's `normal` shaper (3,000 bytes a second, applied by
    /// `c2s_shaper`; measured by the detector at 2,890 to 3,655), or Prosody's `mod_limits` c2s rate (10kb/s, which Prosody applies a second at a time: a
    /// watcher sending 60,000 to 150,000 bytes at once was read at 6,800 to 8,600 bytes a second). Nil for any other rate: a
    /// limit set by hand, or a server short of CPU.
    public var likelySetting: String? { Self.likelySetting(bytesPerSecond: bytesPerSecond) }

    static func likelySetting(bytesPerSecond: Int) -> String? {
        let shipped = [
            (2_000 ... 4_500, "ejabberd's c2s_shaper rule: the shipped shaper \"normal\" reads 3000 bytes a second"),
            (6_000 ... 12_500, "Prosody's mod_limits: the shipped c2s rate is 10kb/s"),
        ]
        return shipped.first { $0.0.contains(bytesPerSecond) }?.1
    }

    /// What is happening and the settings that likely cause it: one wording for the log, `/v1/stats` and
    /// `/readyz`.
    public var explanation: String {
        let rate = answersPerSecond < 10 ? "\((answersPerSecond * 10).rounded() / 10)" : "\(Int(answersPerSecond))"
        let seen = """
            the XMPP server reads the watcher's questions at about \(bytesPerSecond) bytes a second (\(rate) a \
            second, \(waiting) waiting)
            """
        let remedy = "exempt the watcher account (\"Server rate limits\" in the Deploying guide)"
        if let likelySetting {
            return "\(seen): a client rate limit, likely \(likelySetting); \(remedy)"
        }
        return """
            \(seen): a server short of CPU, or a client rate limit (ejabberd's c2s_shaper, Prosody's mod_limits); \
            if the server is idle, \(remedy)
            """
    }
}
