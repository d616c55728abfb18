import PresenceSource
import PresenceStore

/// Whether this replica serves a complete, live picture, and why not: what `GET /readyz` answers and what
/// ``ReadinessConfiguration/WhenNotReady/refuse`` acts on.
///
/// A replica with an XMPP source is ready once the server's snapshot is complete (after a restore from the disk
/// tier too: the snapshot is what confirms the restored statuses), and stays ready for
/// ``ReadinessConfiguration/grace`` after it stops being live. A replica whose session another client replaced
/// (the same resource) is never ready again. A replica with only the feed port is ready once it answers: it has
/// restored its disk tier before it opened its ports, and it has no server to be behind.
public struct Readiness: Hashable, Sendable {
    public var isReady: Bool
    /// A sentence for the operator: what makes the replica ready or keeps it from being so. It names no host and
    /// quotes no error, so it can be answered to anyone who may ask `/readyz`.
    public var reason: String
    /// The XMPP source's last error behind a reason (it may name the server's host and port): for the logs,
    /// `systemctl status` and callers who hold a token, in ``explanation``.
    public var detail: String?

    public init(isReady: Bool, reason: String, detail: String? = nil) {
        self.isReady = isReady
        self.reason = reason
        self.detail = detail
    }

    /// The reason with its detail.
    public var explanation: String { detail.map { "\(reason) (\($0))" } ?? reason }

    /// The readiness of a replica whose source is in `status` (nil: no XMPP source), at `now`.
    public static func of(
        _ status: XMPPSourceStatus?, grace: Duration, now: ContinuousClock.Instant = .now
    ) -> Readiness {
        guard let status else {
            return Readiness(isReady: true, reason: "no XMPP source: statuses come from the feed port")
        }
        if status.replaced {
            return Readiness(
                isReady: false,
                reason: "another client logged in on this replica's XMPP resource and replaced its session; give "
                    + "each replica its own --xmpp-resource and restart this one")
        }
        if status.connected && status.snapshotComplete {
            return Readiness(isReady: true, reason: "live: the XMPP snapshot is complete")
        }
        let why: String
        var detail: String?
        if !status.connected {
            why = "not logged in to the XMPP server"
            detail = status.lastError
        } else if status.snapshotUnconfirmed > 0 {
            why = "the XMPP snapshot is not complete: \(status.snapshotUnconfirmed) members unconfirmed"
            detail = status.readLimit?.explanation ?? status.warning
        } else if let limit = status.readLimit {
            why = "the XMPP snapshot is not complete"
            detail = limit.explanation
        } else {
            why = "the XMPP snapshot is not complete"
        }
        guard status.everLive, let since = status.notLiveSince else {
            return Readiness(isReady: false, reason: why, detail: detail)
        }
        let elapsed = now - since
        let notLive = "\(why) for \(Int(elapsed.seconds)) s"
        guard elapsed < grace else { return Readiness(isReady: false, reason: notLive, detail: detail) }
        return Readiness(
            isReady: true, reason: "\(notLive), within the grace period of \(grace.seconds) s", detail: detail)
    }
}
