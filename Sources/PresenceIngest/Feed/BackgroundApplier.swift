import PresenceStore
import XMPPStream

/// A session's side of an ``ApplyPool``: gathers parsed stanzas into batches and queues them in the session's
/// lane, where a pool thread decodes and applies them in stream order while the session parses on.
///
/// Stanzas cross in batches of at most ``batchSize`` stanzas and ``maximumBatchBytes`` of input, and whatever a
/// `feed` parsed is handed over when it returns, so a stream that trickles is applied as it comes. At most
/// ``ApplyScheduler/maximumQueuedBatches`` wait; then the caller waits too, so memory stays bounded (a few MiB)
/// however far the parser runs ahead and however large the stanzas. A batch of a few stanzas handed over while
/// nothing of the session's waits or is being applied is applied on the caller's thread instead
/// (``appliedHereUpTo``).
///
/// One caller: its methods are not called from two threads at once.
final class BackgroundApplier {
    static let batchSize = 512
    static let maximumBatchBytes = 1 << 20
    /// A batch of at most this many stanzas, handed over while the lane is idle, is applied on the caller's thread
    /// (``ApplyScheduler/applyHereIfIdle(_:in:)``): what a live feed sends at a time. A feed sending flat out
    /// fills whole batches, which go to the pool.
    static let appliedHereUpTo = 32

    /// Kept alive while the session has batches in it.
    private let pool: ApplyPool
    private let lane: ApplyLane
    private var batch: [ParsedStanza] = []
    /// The input bytes of the stanzas in ``batch``.
    private var batchBytes = 0
    /// Stanzas of applied batches, to go back to the parser.
    private var returned: [ParsedStanza] = []
    /// Whether every batch handed over is applied on the caller's thread, whatever its size, while the lane is
    /// idle: the caller parses a small read on a thread that must not wait for the pool (``IngestSession``'s
    /// `feed(_:applyingHere:)`).
    var applyingHere = false

    init(
        pool: ApplyPool, storage: any MemoryStorage, decoder: PresenceDecoder,
        onBatchApplied: (@Sendable (IngestStatistics) -> Void)?
    ) {
        self.pool = pool
        lane = ApplyLane(storage: storage, decoder: decoder, onBatchApplied: onBatchApplied)
        batch.reserveCapacity(BackgroundApplier.batchSize)
    }

    deinit {
        // The pool applies what is queued.
        handOver()
    }

    /// Queues a stanza, with the time to give its update if it is a presence without a delay stamp.
    func enqueue(_ stanza: Stanza, receivedAt time: PresenceTime) {
        batchBytes += stanza.byteCount
        batch.append((stanza, time))
        if batch.count == BackgroundApplier.batchSize || batchBytes >= BackgroundApplier.maximumBatchBytes {
            handOver()
        }
    }

    /// Queues the stanzas gathered so far, however few.
    func handOver() {
        guard !batch.isEmpty else { return }
        // Applied batches come back here: their stanzas return to the parser, and whatever is freed is freed on
        // this thread, where it was allocated (freeing on the other thread made allocations here miss the
        // allocator's thread cache).
        if applyingHere || batch.count <= BackgroundApplier.appliedHereUpTo,
            pool.scheduler.applyHereIfIdle(batch, in: lane)
        {
            returned.append(contentsOf: batch)
        } else if let applied = pool.scheduler.push(batch, to: lane) {
            returned.append(contentsOf: applied)
        }
        batch.removeAll(keepingCapacity: true)
        batchBytes = 0
    }

    /// Returns once every stanza enqueued so far is decoded and applied.
    func waitUntilApplied() {
        handOver()
        pool.scheduler.waitUntilEmpty(lane)
    }

    /// Whether every stanza handed over so far is decoded and applied.
    var isIdle: Bool { pool.scheduler.hasReached(.empty, in: lane) }

    /// Suspends until every stanza handed over so far is decoded and applied.
    func applied() async {
        await pool.scheduler.wait(for: .empty, in: lane)
    }

    /// Suspends until the lane has room for what the next read makes, so that feeding it does not block a thread.
    func room() async {
        await pool.scheduler.wait(for: .room, in: lane)
    }

    /// The outcomes of every stanza applied so far.
    var outcomes: IngestStatistics { pool.scheduler.outcomes(of: lane) }

    /// Hands the stanzas of applied batches back to `recycle` (the parser that made them builds new stanzas in
    /// their memory, see ``XMPPStreamParser/recycle(_:)``).
    func recycleApplied(_ recycle: (consuming Stanza) -> Void) {
        for (stanza, _) in returned { recycle(stanza) }
        returned.removeAll(keepingCapacity: true)
    }
}
