import PresenceModel

/// What a storage knows about a user: their presence, that it lost them, or that it never had them.
public enum StoredPresence: Hashable, Sendable {
    case present(UserPresence)
    /// The storage held this user and dropped them; the cause when it knows it.
    case lost(RemovalCause?)
    /// Never stored (or removed by the caller).
    case unknown

    public var presence: UserPresence? {
        if case .present(let presence) = self { return presence }
        return nil
    }
}
