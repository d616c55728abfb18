/// One user's answer as the CLI (`presence query --format json`) and the HTTP API (`/v1/presence`) give it.
///
/// A field with no value is encoded as `null`, never left out: scripts read every field of every result.
public struct PresenceQueryResult: Codable, Hashable, Sendable {
    public var jid: String
    /// `available`, `offline` (a known state with its time), `unknown` (never seen) or `lost` (the storage
    /// dropped it).
    public var state: String
    /// `chat`, `away`, `xa` or `dnd`; null for plain available and for users not available.
    public var show: String?
    public var status: String?
    public var priority: Int?
    public var resource: String?
    public var attendance: String?
    /// XEP-0082 UTC time since when this state holds.
    public var since: String?
    /// For `lost`: the eviction cause, when the storage knows it.
    public var cause: String?

    public init(jid: BareJID, stored: StoredPresence) {
        self.jid = jid.rawValue
        state = "unknown"
        switch stored {
        case .present(let presence):
            guard let status = presence.status else { return }
            let shown = status.presence
            if status.isAvailable {
                state = "available"
                show = shown.details.show?.rawValue
                priority = Int(shown.details.priority)
            } else {
                state = "offline"
            }
            self.status = shown.details.status
            resource = shown.resource.isEmpty ? nil : shown.resource
            attendance = shown.details.attendance?.rawValue
            since = shown.updatedAt.description
        case .lost(let evictionCause):
            state = "lost"
            cause = evictionCause?.rawValue
        case .unknown:
            break
        }
    }

    private enum CodingKeys: String, CodingKey {
        case jid, state, show, status, priority, resource, attendance, since, cause
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(jid, forKey: .jid)
        try container.encode(state, forKey: .state)
        try container.encode(show, forKey: .show)
        try container.encode(status, forKey: .status)
        try container.encode(priority, forKey: .priority)
        try container.encode(resource, forKey: .resource)
        try container.encode(attendance, forKey: .attendance)
        try container.encode(since, forKey: .since)
        try container.encode(cause, forKey: .cause)
    }
}
