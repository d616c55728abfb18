import PresenceModel
import XMPPStream

/// One contact of the account's roster (RFC 6121 §2.1.2).
public struct RosterItem: Sendable, Hashable {
    /// Whose presence flows where (RFC 6121 §2.1.2.5).
    public enum Subscription: String, Sendable, Hashable {
        /// Neither side sees the other.
        case none
        /// The account sees the contact's presence.
        case to
        /// The contact sees the account's presence.
        case from
        /// Both see each other.
        case both
        /// In a roster push: the contact was removed.
        case remove

        /// Whether the server sends this contact's presence to the account.
        public var deliversContactPresence: Bool { self == .to || self == .both }
    }

    public var jid: BareJID
    public var subscription: Subscription
    public var name: String?
    public var groups: [String]

    public init(jid: BareJID, subscription: Subscription, name: String? = nil, groups: [String] = []) {
        self.jid = jid
        self.subscription = subscription
        self.name = name
        self.groups = groups
    }
}
