import PresenceModel

/// What an XMPP source is doing now: the answer to "is what I see live?".
public struct XMPPSourceStatus: Sendable, Hashable {
    /// The watcher account.
    public var jid: String
    /// Where it connects, `host:port`.
    public var server: String
    /// Whether a session is logged in now. While false, every status is as of ``disconnectedSince``.
    public var connected = false
    /// Whether the current session's roster snapshot is complete (every member either reported or known offline).
    public var snapshotComplete = false
    public var connectedSince: PresenceTime?
    public var disconnectedSince: PresenceTime?
    /// Connection attempts, successful or not.
    public var connectAttempts = 0
    /// Sessions logged in after the first one.
    public var reconnects = 0
    /// Contacts on the roster whose presence the server sends (subscription `to` or `both`).
    public var rosterSize = 0
    /// Presence stanzas from contacts applied to the storage.
    public var presencesReceived = 0
    /// Members set offline because the server reported no available resource for them in a snapshot.
    public var markedOffline = 0
    /// How long the last snapshot took, from the initial presence to the server's answer after it.
    public var lastSnapshotDuration: Duration?
    /// Why the last connection failed or ended, if it did.
    public var lastError: String?
    /// Whether the session runs over TLS.
    public var encrypted = false

    public init(jid: String, server: String) {
        self.jid = jid
        self.server = server
    }
}
