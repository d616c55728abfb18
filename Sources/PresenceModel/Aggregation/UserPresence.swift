/// Everything known about one user's presence: the last presence of each available resource, and the last
/// unavailable presence. This is the value every storage holds per bare JID.
///
/// The RFC 6121 aggregation lives here and only here: storages store and return it, they never reinterpret it.
/// The user's ``status`` is the available resource with the highest priority, ties going to the most recently
/// updated one; when the last resource goes the user is ``UserStatus/offline(lastPresence:)``, a known state
/// with its time, unlike a user never seen.
public struct UserPresence: Hashable, Sendable {
    /// The available resources, in no particular order. Usually one or two.
    public package(set) var availableResources: [ResourcePresence]
    /// The most recent unavailable presence, kept for the offline status.
    public package(set) var lastUnavailable: ResourcePresence?
    package var sequence: UInt32 = 0

    /// A user with nothing applied yet; apply an update before asking for ``status``.
    public init() {
        availableResources = []
        lastUnavailable = nil
    }

    /// The user after applying `update` to a user never seen before.
    public init(applying update: PresenceUpdate, receivedAt: PresenceTime) {
        self.init()
        apply(update, receivedAt: receivedAt)
    }

    /// The most available resources one user keeps. A further resource replaces the least recently updated
    /// one. Servers allow far fewer sessions per account, so this only bounds what a hostile stream can make one
    /// user cost (and it is what the compact storage encoding can count).
    public static let maximumResources = 255

    private func oldestResourceIndex() -> Int? {
        availableResources.indices.min { availableResources[$1].isNewer(than: availableResources[$0]) }
    }

    /// The status to show, or nil for a value that never had an update applied.
    public var status: UserStatus? {
        guard var best = availableResources.first else { return lastUnavailable.map { .offline(lastPresence: $0) } }
        for candidate in availableResources.dropFirst() {
            if candidate.details.priority > best.details.priority
                || (candidate.details.priority == best.details.priority && candidate.isNewer(than: best))
            {
                best = candidate
            }
        }
        return .available(best)
    }

    /// Applies one presence update (RFC 6121 §4.7): an available presence replaces that resource's last
    /// presence; an unavailable one removes the resource, or every resource when sent from the bare JID.
    /// `receivedAt` is the update's time unless it carries a delay stamp.
    public mutating func apply(_ update: PresenceUpdate, receivedAt: PresenceTime) {
        sequence &+= 1
        let presence = ResourcePresence(
            resource: update.from.resource ?? "", details: update.details,
            updatedAt: update.delayedAt ?? receivedAt, sequence: sequence)
        switch update.availability {
        case .available:
            if let index = availableResources.firstIndex(where: { $0.resource == presence.resource }) {
                availableResources[index] = presence
            } else {
                if availableResources.count == UserPresence.maximumResources, let oldest = oldestResourceIndex() {
                    availableResources.remove(at: oldest)
                }
                availableResources.append(presence)
            }
        case .unavailable:
            if update.from.resource == nil {
                availableResources.removeAll()
            } else if let index = availableResources.firstIndex(where: { $0.resource == presence.resource }) {
                availableResources.remove(at: index)
            }
            lastUnavailable = presence
        }
    }
}

extension UserPresence {
    /// Whether two values show the same thing: the same status and the same resources with the same
    /// presences, ignoring the internal arrival counters (a user rebuilt after an eviction has new ones).
    public func isEquivalent(to other: UserPresence) -> Bool {
        func normalized(_ presence: ResourcePresence?) -> ResourcePresence? {
            presence.map { ResourcePresence(resource: $0.resource, details: $0.details, updatedAt: $0.updatedAt) }
        }
        guard normalized(status?.presence) == normalized(other.status?.presence),
            status?.isAvailable == other.status?.isAvailable,
            availableResources.count == other.availableResources.count
        else { return false }
        let mine = Set(availableResources.map { normalized($0)! })
        return mine == Set(other.availableResources.map { normalized($0)! })
    }
}
