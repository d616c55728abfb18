import PresenceModel

/// One user's answer to a lookup: what is known, where it came from, and why the server was not asked (or did
/// not answer) when the policy wanted it to be.
public struct LookupAnswer: Hashable, Sendable {
    public var jid: BareJID
    public var stored: StoredPresence
    public var origin: AnswerOrigin
    /// Set when the policy called for a probe and there is no probe answer.
    public var probeFailure: ProbeFailure?
    /// The stored presence was rebuilt after a loss from one resource's presence and not confirmed since: it may
    /// lack the user's other resources (``PresenceProber/isPartial(_:)``).
    public var isPartial = false
    /// The answer was restored from disk at start and neither updated nor confirmed by the source since: it is
    /// the user's status as of this time (the previous process's last write), not a live one.
    public var restoredAsOf: PresenceTime?

    public init(jid: BareJID, stored: StoredPresence, origin: AnswerOrigin, probeFailure: ProbeFailure? = nil) {
        self.jid = jid
        self.stored = stored
        self.origin = origin
        self.probeFailure = probeFailure
    }

    /// The storage's answer as it is.
    init(jid: BareJID, fromStorage stored: StoredPresence, probeFailure: ProbeFailure? = nil) {
        let origin: AnswerOrigin = if case .present = stored { .storage } else { .none }
        self.init(jid: jid, stored: stored, origin: origin, probeFailure: probeFailure)
    }
}
