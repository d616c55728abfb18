/// The status a UI shows for one user, derived from all of the user's resources.
public enum UserStatus: Hashable, Sendable {
    /// At least one resource is available; this is the one that represents the user.
    case available(ResourcePresence)
    /// Every resource has gone. `lastPresence` is the last unavailable presence: its time is when the user went
    /// offline, and its status and attendance ("on vacation") still say something.
    case offline(lastPresence: ResourcePresence)

    /// The presence whose fields are shown.
    public var presence: ResourcePresence {
        switch self {
        case .available(let presence), .offline(let presence): presence
        }
    }

    public var isAvailable: Bool {
        if case .available = self { return true }
        return false
    }

    /// Since when this status holds.
    public var since: PresenceTime { presence.updatedAt }
}
