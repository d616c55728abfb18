import PresenceModel

/// Why a stanza did not change any status although it was well-formed: counted, never an error.
public enum IgnoredStanzaReason: String, Hashable, Sendable, CaseIterable, Comparable {
    case subscribe, subscribed, unsubscribe, unsubscribed, probe
    /// A presence of `type='error'`.
    case error
    /// A `<message>` stanza.
    case message
    /// An `<iq>` stanza.
    case iq
    /// Any other top-level element (stream features, stream errors, unknown stanzas).
    case other

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Why a presence stanza was refused: it claimed to change a status but could not be attributed or understood.
public enum RejectedPresenceReason: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// No `from` attribute: nobody to attribute the status to.
    case missingFrom
    /// A `from` that is not a valid JID.
    case invalidFrom(JIDError)
    /// A `type` that RFC 6121 does not define.
    case unknownType

    /// A stable, kebab-case name for reports: `missing-from`, `invalid-from:empty-localpart`, `unknown-type`.
    public var description: String {
        switch self {
        case .missingFrom: "missing-from"
        case .invalidFrom(let error): "invalid-from:\(error.reason)"
        case .unknownType: "unknown-type"
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.description < rhs.description }
}

/// What a stanza means for presence.
public enum StanzaDisposition: Hashable, Sendable {
    case update(PresenceUpdate)
    case ignored(IgnoredStanzaReason)
    case rejected(RejectedPresenceReason)
}
