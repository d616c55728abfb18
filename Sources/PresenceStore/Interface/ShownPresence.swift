import PresenceModel

/// The resource a user's answer shows (`UserPresence.status`), read where the storage keeps it, without
/// building the user's whole presence.
///
/// What the query API writes for each user of a batch: decoding every resource into strings, then aggregating,
/// then copying the shown one into a result was a third of a 1,000-JID batch's time (Documentation/Benchmarks.md).
///
/// The byte buffers point into the storage's memory: they are valid only inside the closure that gets the value.
public struct ShownPresence {
    /// Whether the user is available (the highest-priority available resource), or offline (their last
    /// unavailable presence).
    public var isAvailable: Bool
    public var show: PresenceShow?
    public var priority: Int8
    public var attendance: Attendance?
    public var updatedAt: PresenceTime
    /// UTF-8; empty for the bare JID.
    public var resource: UnsafeRawBufferPointer
    /// UTF-8, nil without a status. A status the storage cut at its length limit may end inside a character:
    /// readers repair that end as `String(decoding:as:)` does.
    public var status: UnsafeRawBufferPointer?

    /// What `status` shows, in place: `body` gets nil for a user with no presence at all.
    static func withShown<R>(_ status: UserStatus?, _ body: (ShownPresence?) -> R) -> R {
        guard let status else { return body(nil) }
        let presence = status.presence
        var resource = presence.resource
        var text = presence.details.status
        return resource.withUTF8 { resourceBytes in
            func shown(_ statusBytes: UnsafeRawBufferPointer?) -> R {
                body(
                    ShownPresence(
                        isAvailable: status.isAvailable, show: presence.details.show,
                        priority: presence.details.priority, attendance: presence.details.attendance,
                        updatedAt: presence.updatedAt, resource: UnsafeRawBufferPointer(resourceBytes),
                        status: statusBytes))
            }
            guard text != nil else { return shown(nil) }
            return text!.withUTF8 { shown(UnsafeRawBufferPointer($0)) }
        }
    }
}

/// ``StoredPresence`` with the present user reduced to the resource shown (see ``ShownPresence``).
public enum StoredShownPresence {
    /// Stored; nil for a stored user with no presence at all.
    case present(ShownPresence?)
    case lost(RemovalCause?)
    case unknown
}
