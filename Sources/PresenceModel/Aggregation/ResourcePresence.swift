/// The last presence of one resource (device) of a user.
public struct ResourcePresence: Hashable, Sendable {
    /// The resourcepart; "" for a presence sent from the bare JID.
    public var resource: String
    public var details: PresenceDetails
    /// When this presence became true (its delay stamp, or when it was applied).
    public var updatedAt: PresenceTime
    /// Arrival order within the user, to break ties between equal timestamps.
    package var sequence: UInt32

    public init(resource: String, details: PresenceDetails, updatedAt: PresenceTime, sequence: UInt32 = 0) {
        self.resource = resource
        self.details = details
        self.updatedAt = updatedAt
        self.sequence = sequence
    }

    /// Whether this presence was updated more recently than `other`: by time, then by arrival.
    func isNewer(than other: ResourcePresence) -> Bool {
        if updatedAt != other.updatedAt { return updatedAt > other.updatedAt }
        return Int32(bitPattern: sequence &- other.sequence) > 0  // wrap-around safe
    }
}
