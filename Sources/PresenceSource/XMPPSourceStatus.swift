import PresenceModel

/// What an XMPP source is doing now: the answer to "is what I see live?".
public struct XMPPSourceStatus: Sendable, Hashable {
    /// The watcher account.
    public var jid: String
    /// Where it connects, `host:port`.
    public var server: String
    /// Whether a session is logged in now. While false, every status is as of ``disconnectedSince``.
    public var connected = false
    /// Whether the current session's roster snapshot is complete: the server said for certain, of every member,
    /// that they are available (with which resources) or have no available resource.
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
    /// Members set offline because the server said they had no available resource, in a snapshot.
    public var markedOffline = 0
    /// Roster members the current snapshot has no certain answer for yet (counted when they are asked again).
    public var snapshotUnconfirmed = 0
    /// Members whose stored entry was rebuilt after a loss from one resource's presence and not confirmed by the
    /// server since: they may have resources it does not show (the default lookup policy refills them).
    public var partialUsers = 0
    /// Why statuses are not all known, when the source can tell: the server shares no member's presence with
    /// the watcher, refuses last activity, or has not answered.
    public var warning: String?
    /// The confirmation round of the current session's snapshot.
    var snapshotRound: String?
    /// How long the last snapshot took, from the initial presence to the server's answer after it.
    public var lastSnapshotDuration: Duration?
    /// Why the last connection failed or ended, if it did.
    public var lastError: String?
    /// Whether the session runs over TLS.
    public var encrypted = false
    /// The server ended the session because another client bound the same resource of the watcher account
    /// (stream error `conflict`): the source has stopped instead of taking the resource back, which would replace
    /// the other session in turn, over and over.
    public var replaced = false
    /// When what the source shows stopped being live (the session ended, or a new one has not finished its
    /// snapshot); nil while live, and before the first complete snapshot.
    public var notLiveSince: ContinuousClock.Instant?
    /// Whether a snapshot has ever been complete in this process.
    public var everLive = false
    /// Periodic resyncs completed: every member asked again at a bounded rate.
    public var resyncs = 0
    /// Members asked by resyncs, and stored statuses a resync found wrong and corrected (a member shown
    /// available whom the server says has no such resource, or none at all).
    public var resyncProbed = 0
    public var resyncCorrected = 0
    /// How long the last complete resync took, from its first probe to its last member's certain answer.
    public var lastResyncDuration: Duration?
    /// Keep-alive pings sent to the server, every session together: one per `--xmpp-keepalive` of silence.
    public var keepAlivePings = 0
    /// The server reads the watcher's connection at a limited rate now, so questions about members wait: nil
    /// when no limit holds the session back.
    public var readLimit: ServerReadLimit?
    /// Last-activity questions waiting to be sent now, and in flight.
    public var questionsWaiting = 0
    public var questionsInFlight = 0
    /// Answers of the server's session directory (``SessionDirectory``), every session together; 0 without one.
    public var sessionDirectoryAnswers = 0
    /// Why the session directory failed in the current session (members are then asked last activity one by
    /// one); nil while it answers, and without one.
    public var sessionDirectoryError: String?

    public init(jid: String, server: String) {
        self.jid = jid
        self.server = server
    }
}
