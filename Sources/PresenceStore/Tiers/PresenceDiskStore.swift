import PresenceModel

/// The durable half of a ``TieredStorage``: a file of users and their values that survives the process.
///
/// A disk store is written only by its tier's flusher, one batch at a time, each batch all or nothing, and read
/// from any thread. Errors are the store's own, naming its file; the tier logs, counts and retries them.
public protocol PresenceDiskStore: AnyObject, Sendable {
    /// Where the store lives, for messages and logs.
    var path: String { get }

    /// The user's stored value, nil when the store does not hold them.
    func read(_ key: BareJID) throws -> UserPresence?

    /// Applies `batch` in one transaction: every value written (nil deletes the user), or none of them. With
    /// `clearingFirst`, every user is deleted before the batch is written.
    func write(_ batch: [(key: BareJID, value: UserPresence?)], clearingFirst: Bool, at time: PresenceTime) throws
        -> DiskWriteReport

    /// Calls `body` with every stored user, in no particular order (a restore).
    func forEach(_ body: (BareJID, UserPresence) throws -> Void) throws

    /// When the last batch was written, if one ever was: what a restored status is current as of.
    var lastWrite: PresenceTime? { get }

    /// Users held, as of the last completed write.
    var userCount: Int { get }

    /// Bytes the store takes on disk now.
    var fileBytes: Int { get }

    /// Makes what was written durable and releases the file. Further calls fail.
    func close()
}

/// What one write did.
public struct DiskWriteReport: Hashable, Sendable {
    /// Users written or deleted.
    public var users: Int
    /// Bytes of keys and values written (before the engine's own pages and journal).
    public var bytes: Int
    /// Users the store holds after the write.
    public var userCount: Int

    public init(users: Int, bytes: Int, userCount: Int) {
        self.users = users
        self.bytes = bytes
        self.userCount = userCount
    }
}
