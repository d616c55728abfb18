/// One presence stanza that changes a user's status, decoded.
public struct PresenceUpdate: Hashable, Sendable {
    public enum Availability: Hashable, Sendable {
        /// No `type`: the resource is online.
        case available
        /// `type='unavailable'`: the resource (or, from a bare JID, every resource) is gone.
        case unavailable
    }

    /// The sender; its bare JID is the user, its resource the device.
    public var from: JID
    public var availability: Availability
    public var details: PresenceDetails
    /// The `<delay xmlns='urn:xmpp:delay'/>` stamp: when the presence was originally sent. When present it is
    /// the update's time; otherwise the time the update is applied.
    public var delayedAt: PresenceTime?

    public init(
        from: JID, availability: Availability, details: PresenceDetails = PresenceDetails(),
        delayedAt: PresenceTime? = nil
    ) {
        self.from = from
        self.availability = availability
        self.details = details
        self.delayedAt = delayedAt
    }
}
