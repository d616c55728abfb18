import PresenceStore

/// The disk tier in `/v1/stats` (`disk`) and in replay reports: where answers came from, what the flusher wrote,
/// what the file costs. Null for a storage without a disk tier.
public struct DiskReport: Hashable, Sendable, Decodable, JSONDocument {
    /// Answers from memory (the memory storage or the write-behind buffer), from disk, and from neither.
    public var memoryHits: Int
    public var diskHits: Int
    public var misses: Int
    /// Reads that went to the disk, and those that failed.
    public var diskReads: Int
    public var diskReadErrors: Int
    /// Users the memory tier dropped: on disk, so not lost.
    public var spilled: Int
    /// Users whose latest value is not on disk yet (over a memory that keeps everyone: updates logged since the
    /// last flush began, at least as many).
    public var dirtyUsers: Int
    /// Users restored from disk at start and neither updated nor confirmed by the source since.
    public var restoredUsers: Int
    /// XEP-0082 UTC time the restored statuses were current as of.
    public var restoredAsOf: String?
    public var flushes: Int
    public var failedFlushes: Int
    public var usersWritten: Int
    public var bytesWritten: Int
    public var lastFlushAt: String?
    public var lastFlushMilliseconds: Double?
    /// Users on disk, and the file's size, as of the last flush.
    public var diskUsers: Int
    public var fileBytes: Int
    /// The disk's last error while it lasts.
    public var lastError: String?

    public init(_ statistics: TierStatistics) {
        memoryHits = statistics.memoryHits
        diskHits = statistics.diskHits
        misses = statistics.misses
        diskReads = statistics.diskReads
        diskReadErrors = statistics.diskReadErrors
        spilled = statistics.spilledTotal
        dirtyUsers = statistics.dirty
        restoredUsers = statistics.restored
        restoredAsOf = statistics.restoredAt?.description
        flushes = statistics.flushes
        failedFlushes = statistics.failedFlushes
        usersWritten = statistics.usersWritten
        bytesWritten = statistics.bytesWritten
        lastFlushAt = statistics.lastFlushAt?.description
        lastFlushMilliseconds = statistics.lastFlushDuration.map { $0.seconds * 1000 }
        diskUsers = statistics.diskUsers
        fileBytes = statistics.fileBytes
        lastError = statistics.lastError
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("bytesWritten"); writer.int(bytesWritten)
            writer.key("dirtyUsers"); writer.int(dirtyUsers)
            writer.key("diskHits"); writer.int(diskHits)
            writer.key("diskReadErrors"); writer.int(diskReadErrors)
            writer.key("diskReads"); writer.int(diskReads)
            writer.key("diskUsers"); writer.int(diskUsers)
            writer.key("failedFlushes"); writer.int(failedFlushes)
            writer.key("fileBytes"); writer.int(fileBytes)
            writer.key("flushes"); writer.int(flushes)
            writer.key("lastError"); writer.string(lastError)
            writer.key("lastFlushAt"); writer.string(lastFlushAt)
            writer.key("lastFlushMilliseconds"); writer.double(lastFlushMilliseconds)
            writer.key("memoryHits"); writer.int(memoryHits)
            writer.key("misses"); writer.int(misses)
            writer.key("restoredAsOf"); writer.string(restoredAsOf)
            writer.key("restoredUsers"); writer.int(restoredUsers)
            writer.key("spilled"); writer.int(spilled)
            writer.key("usersWritten"); writer.int(usersWritten)
        }
    }
}
