/// An upstream source of presence in `/v1/stats` (`source`): today an XMPP server the service is logged in to as
/// a watcher. Says whether what the service shows is live, and since when it is not.
public struct SourceReport: Hashable, Sendable, Decodable, JSONDocument {
    /// `xmpp`.
    public var kind: String
    /// The watcher account.
    public var jid: String
    /// `host:port` the source connects to.
    public var server: String
    public var connected: Bool
    /// Connected and the roster snapshot complete: every status shown is current.
    public var live: Bool
    public var encrypted: Bool
    /// XEP-0082 UTC times.
    public var connectedSince: String?
    public var disconnectedSince: String?
    public var connectAttempts: Int
    public var reconnects: Int
    /// Roster members whose presence the server sends to the watcher.
    public var rosterSize: Int
    public var presencesReceived: Int
    /// Members set offline because the server said, in a snapshot, that they had no available resource.
    public var markedOffline: Int
    /// Members whose stored entry was rebuilt after a loss from one resource's presence and not confirmed since:
    /// what `compare` counts as stale when such an entry differs from the truth.
    public var partialUsers: Int
    /// Roster members the current snapshot has no certain answer for yet: while above 0, `live` is false.
    public var snapshotUnconfirmed: Int
    /// Why statuses are not all known, when the source can tell (the server shares no member's presence with the
    /// watcher, refuses last activity, or has not answered).
    public var warning: String?
    public var lastSnapshotMilliseconds: Double?
    public var lastError: String?
    /// Another client bound the watcher's resource and the server replaced this session: the source stopped.
    public var replaced = false
    /// Periodic resyncs completed, members they asked, and stored statuses they corrected.
    public var resyncs = 0
    public var resyncProbed = 0
    public var resyncCorrected = 0
    public var lastResyncMilliseconds: Double?
    /// Keep-alive pings sent to the server: the cost of watching the connection for silence.
    public var keepAlivePings = 0
    /// Last-activity questions about members waiting for a place in flight, and in flight.
    public var questionsWaiting = 0
    public var questionsInFlight = 0
    /// The server reads the watcher's connection at a limited rate now; nil when no limit holds it back.
    public var readLimit: ReadLimitReport?
    /// Answers of the server's list of sessions (`--xmpp-sessions-api`), and why it failed in this session.
    public var sessionDirectoryAnswers = 0
    public var sessionDirectoryError: String?

    public init(
        kind: String, jid: String, server: String, connected: Bool, live: Bool, encrypted: Bool,
        connectedSince: String?, disconnectedSince: String?, connectAttempts: Int, reconnects: Int, rosterSize: Int,
        presencesReceived: Int, markedOffline: Int, snapshotUnconfirmed: Int = 0, partialUsers: Int = 0, warning: String? = nil,
        lastSnapshotMilliseconds: Double?, lastError: String?
    ) {
        self.kind = kind
        self.jid = jid
        self.server = server
        self.connected = connected
        self.live = live
        self.encrypted = encrypted
        self.connectedSince = connectedSince
        self.disconnectedSince = disconnectedSince
        self.connectAttempts = connectAttempts
        self.reconnects = reconnects
        self.rosterSize = rosterSize
        self.presencesReceived = presencesReceived
        self.markedOffline = markedOffline
        self.snapshotUnconfirmed = snapshotUnconfirmed
        self.partialUsers = partialUsers
        self.warning = warning
        self.lastSnapshotMilliseconds = lastSnapshotMilliseconds
        self.lastError = lastError
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("connectAttempts"); writer.int(connectAttempts)
            writer.key("connected"); writer.bool(connected)
            writer.key("connectedSince"); writer.string(connectedSince)
            writer.key("disconnectedSince"); writer.string(disconnectedSince)
            writer.key("encrypted"); writer.bool(encrypted)
            writer.key("jid"); writer.string(jid)
            writer.key("keepAlivePings"); writer.int(keepAlivePings)
            writer.key("kind"); writer.string(kind)
            writer.key("lastError"); writer.string(lastError)
            writer.key("lastSnapshotMilliseconds"); writer.double(lastSnapshotMilliseconds)
            writer.key("live"); writer.bool(live)
            writer.key("markedOffline"); writer.int(markedOffline)
            writer.key("partialUsers"); writer.int(partialUsers)
            writer.key("presencesReceived"); writer.int(presencesReceived)
            writer.key("questionsInFlight"); writer.int(questionsInFlight)
            writer.key("questionsWaiting"); writer.int(questionsWaiting)
            writer.key("readLimit")
            if let readLimit { readLimit.write(to: &writer) } else { writer.null() }
            writer.key("lastResyncMilliseconds"); writer.double(lastResyncMilliseconds)
            writer.key("reconnects"); writer.int(reconnects)
            writer.key("replaced"); writer.bool(replaced)
            writer.key("resyncCorrected"); writer.int(resyncCorrected)
            writer.key("resyncProbed"); writer.int(resyncProbed)
            writer.key("resyncs"); writer.int(resyncs)
            writer.key("rosterSize"); writer.int(rosterSize)
            writer.key("server"); writer.string(server)
            writer.key("sessionDirectoryAnswers"); writer.int(sessionDirectoryAnswers)
            writer.key("sessionDirectoryError"); writer.string(sessionDirectoryError)
            writer.key("snapshotUnconfirmed"); writer.int(snapshotUnconfirmed)
            writer.key("warning"); writer.string(warning)
        }
    }
}
