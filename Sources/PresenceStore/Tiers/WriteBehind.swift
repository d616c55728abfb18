import PresenceModel

/// The write-behind buffer and what the tier counts under its lock.
/// A disk tier's write-behind buffer and what the tier counts under its lock: the users written since the last flush
/// began, the users the running flush writes, the filter of users on disk, and the tier's counts.
struct WriteBehind {
    /// Users changed since the last flush began, with their latest value (nil: removed).
    var dirty: [BareJID: UserPresence?] = [:]
    /// Users changed since the last flush began whose value memory holds (a memory that keeps everyone), once
    /// per change: the flusher coalesces them.
    var dirtyKeys: [BareJID] = []
    /// Users the running flush is writing, with their values where memory may drop them.
    var flushing: [BareJID: UserPresence?] = [:]
    var flushingCount = 0
    /// The last flush failed: writes stop asking for early flushes until one succeeds.
    var failing = false
    /// `removeAll` waits for the flusher to empty the disk; until then the disk is not read.
    var clearPending = false
    var filter: KeyFilter
    var users = 0
    var flushEpoch = 0
    var closed = false
    var removals: [RemovalCause: Int] = [:]
    var pressureEvents: [MemoryPressure: Int] = [:]
    var flushes = 0
    var failedFlushes = 0
    var usersWritten = 0
    var bytesWritten = 0
    var lastFlushAt: PresenceTime?
    var lastFlushDuration: Duration?
    var diskUsers = 0
    var fileBytes = 0
    var lastError: String?

    /// What writes compare with the dirty threshold; 0 while flushes fail, so they do not ask again.
    var dirtyCountForFlush: Int { failing ? 0 : dirty.count + dirtyKeys.count }

    /// The buffered value: `.some(nil)` for a removed user, nil when the buffer does not have the user.
    func buffered(_ key: BareJID) -> UserPresence?? {
        if let value = dirty[key] { return .some(value) }
        if let value = flushing[key] { return .some(value) }
        return nil
    }
}
