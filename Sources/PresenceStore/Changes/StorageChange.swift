import PresenceModel

/// One user's visible status changing in a storage, as its change observer sees it.
///
/// Only what a person would see counts: an update that leaves ``VisibleStatus`` as it was (a new priority, the
/// same status again from another device) is not a change and is never published.
public struct StorageChange: Hashable, Sendable, CustomStringConvertible {
    /// Why the visible status changed.
    public enum Cause: Hashable, Sendable, CustomStringConvertible {
        /// A presence update or a `set` changed a user the storage held, or added one it did not know.
        case update
        /// The user left the storage; an eviction makes them `lost`, the caller's removal `unknown`.
        case removal(RemovalCause)
        /// A user the storage had lost was stored again (an update after the eviction, or a probe's answer).
        case refill

        public var description: String {
            switch self {
            case .update: "update"
            case .removal(let cause): "removal(\(cause.rawValue))"
            case .refill: "refill"
            }
        }
    }

    public var key: BareJID
    public var old: VisibleStatus
    public var new: VisibleStatus
    public var cause: Cause

    public init(key: BareJID, old: VisibleStatus, new: VisibleStatus, cause: Cause) {
        self.key = key
        self.old = old
        self.new = new
        self.cause = cause
    }

    public var description: String { "\(key): \(old) -> \(new) [\(cause)]" }
}
