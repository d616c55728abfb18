import PresenceModel

/// A ``TieredStorage``'s counters at one moment: where answers came from, what the flusher wrote, how big the
/// file is.
public struct TierStatistics: Hashable, Sendable {
    /// Answers from memory: the memory storage or the write-behind buffer.
    public var memoryHits: Int
    /// Answers read from disk after memory missed.
    public var diskHits: Int
    /// Lookups neither tier could answer.
    public var misses: Int
    /// Reads that went to the disk (hits, misses on a filter's wrong "maybe", and updates of evicted users).
    public var diskReads: Int
    public var diskReadErrors: Int
    /// Users the memory tier dropped, by cause: still on disk, so not lost.
    public var spilled: [RemovalCause: Int]
    /// Users whose latest value is not on disk yet (over a memory that keeps everyone: updates logged since the
    /// last flush began, at least as many).
    public var dirty: Int
    /// Users restored from disk and neither written nor confirmed since.
    public var restored: Int
    /// What the restored values were current as of (the previous process's last flush).
    public var restoredAt: PresenceTime?
    public var flushes: Int
    public var failedFlushes: Int
    /// Users written by flushes, and their keys' and values' bytes.
    public var usersWritten: Int
    public var bytesWritten: Int
    public var lastFlushAt: PresenceTime?
    public var lastFlushDuration: Duration?
    /// Users on disk as of the last flush.
    public var diskUsers: Int
    /// The store's size on disk after the last flush.
    public var fileBytes: Int
    /// The disk's last error while it lasts (cleared by a flush that succeeds).
    public var lastError: String?

    public var spilledTotal: Int { spilled.values.reduce(0, +) }
}
