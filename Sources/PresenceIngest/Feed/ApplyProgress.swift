/// A session's applying in its ``ApplyPool``, watched from any task: for a session owned by a thread that must
/// never block (an event loop), which checks ``hasRoom`` before it feeds and, when there is none, waits elsewhere
/// and comes back.
public struct ApplyProgress: Sendable {
    /// Kept alive while anyone waits on the lane.
    let pool: ApplyPool
    let lane: ApplyLane

    /// Whether the lane has room for a read's batches: feeding up to ``IngestSession/bytesFedWithoutBlocking``
    /// bytes then never blocks the caller.
    public var hasRoom: Bool { pool.scheduler.isReached(.room, in: lane) }

    /// Suspends until the lane has room for a read's batches.
    public func room() async { await pool.scheduler.wait(for: .room, in: lane) }

    /// Suspends until everything handed over so far is applied.
    public func applied() async { await pool.scheduler.wait(for: .empty, in: lane) }

    /// Whether everything handed over so far is applied.
    public var isApplied: Bool { pool.scheduler.isReached(.empty, in: lane) }
}
