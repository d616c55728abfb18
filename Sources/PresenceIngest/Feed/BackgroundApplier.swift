import Foundation
import PresenceStore
import XMPPStream

/// Decodes parsed stanzas and applies their presence updates to a storage on a thread of its own, in stream order,
/// while the caller goes on parsing: replaying a file keeps two cores busy instead of one.
///
/// Measured on a stream of 1,000,000 updates (README, issue 12): libexpat alone is about 40% of `query --input`'s
/// time, the stanza tree another 15%, decoding and storing the rest; with the last two on this thread, the
/// parsing thread does little more than expat. Stanzas cross in batches of at most ``batchSize`` stanzas and
/// ``maximumBatchBytes`` of input; at most ``maximumQueuedBatches`` wait, and then the caller waits too, so memory
/// stays bounded (a few MiB) however far the parser runs ahead and however large the stanzas.
///
/// One caller: ``enqueue(_:receivedAt:)`` and ``waitUntilApplied()`` are not called from two threads at once.
final class BackgroundApplier {
    static let batchSize = 512
    static let maximumBatchBytes = 1 << 20
    static let maximumQueuedBatches = 8

    private let queue = BatchQueue()
    private var batch: [(Stanza, PresenceTime)] = []
    /// The input bytes of the stanzas in ``batch``.
    private var batchBytes = 0
    /// Stanzas of applied batches, to go back to the parser.
    private var returned: [(Stanza, PresenceTime)] = []

    init(storage: any MemoryStorage, decoder: PresenceDecoder) {
        batch.reserveCapacity(BackgroundApplier.batchSize)
        let queue = self.queue
        let thread = Thread {
            while let batch = queue.next() {
                var outcomes = IngestStatistics()
                for (stanza, time) in batch {
                    PresenceFeed.decode(stanza, with: decoder, counting: &outcomes) { update in
                        storage.apply(update, receivedAt: time)
                    }
                }
                queue.applied(batch, outcomes: outcomes)
            }
        }
        thread.name = "presence-apply"
        thread.start()
    }

    deinit {
        // The thread applies what is queued, then ends.
        queue.push(batch)
        queue.close()
    }

    /// Queues a stanza, with the time to give its update if it is a presence without a delay stamp.
    func enqueue(_ stanza: Stanza, receivedAt time: PresenceTime) {
        batchBytes += stanza.byteCount
        batch.append((stanza, time))
        if batch.count == BackgroundApplier.batchSize || batchBytes >= BackgroundApplier.maximumBatchBytes {
            handOver()
        }
    }

    /// Returns once every stanza enqueued so far is decoded and applied, with the outcomes counted since the last
    /// call.
    func waitUntilApplied() -> IngestStatistics {
        handOver()
        return queue.waitUntilEmpty()
    }

    /// Hands the stanzas of applied batches back to `recycle` (the parser that made them builds new stanzas in
    /// their memory, see ``XMPPStreamParser/recycle(_:)``).
    func recycleApplied(_ recycle: (consuming Stanza) -> Void) {
        for (stanza, _) in returned { recycle(stanza) }
        returned.removeAll(keepingCapacity: true)
    }

    private func handOver() {
        guard !batch.isEmpty else { return }
        // Applied batches come back here: their stanzas return to the parser, and whatever is freed is freed on
        // this thread, where it was allocated (freeing on the other thread made allocations here miss the
        // allocator's thread cache).
        if let applied = queue.push(batch) { returned.append(contentsOf: applied) }
        batch.removeAll(keepingCapacity: true)
        batchBytes = 0
    }
}

/// The batches between the caller and the applying thread.
///
/// `@unchecked Sendable`, proven by its lock: every stored property other than `condition` is read and written only
/// between `condition.lock()` and `condition.unlock()`, and `condition` itself is thread-safe.
private final class BatchQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var batches: [[(Stanza, PresenceTime)]] = []
    /// Applied batches, for the caller to free and reuse.
    private var appliedBatches: [[(Stanza, PresenceTime)]] = []
    private var applying = false
    private var closed = false
    /// Outcomes of the stanzas decoded since ``waitUntilEmpty()`` last returned them.
    private var outcomes = IngestStatistics()

    /// Queues a batch, waiting while ``BackgroundApplier/maximumQueuedBatches`` are already queued; returns an
    /// applied batch, if there is one.
    @discardableResult
    func push(_ batch: [(Stanza, PresenceTime)]) -> [(Stanza, PresenceTime)]? {
        guard !batch.isEmpty else { return nil }
        condition.lock()
        defer { condition.unlock() }
        while batches.count >= BackgroundApplier.maximumQueuedBatches { condition.wait() }
        batches.append(batch)
        condition.broadcast()
        return appliedBatches.popLast()
    }

    /// The next batch to apply, waiting for one; nil once the queue is closed and empty.
    func next() -> [(Stanza, PresenceTime)]? {
        condition.lock()
        defer { condition.unlock() }
        while batches.isEmpty && !closed { condition.wait() }
        guard !batches.isEmpty else { return nil }
        applying = true
        condition.broadcast()
        return batches.removeFirst()
    }

    /// The batch returned by ``next()`` is applied.
    func applied(_ batch: [(Stanza, PresenceTime)], outcomes batchOutcomes: IngestStatistics) {
        condition.lock()
        outcomes.addOutcomes(of: batchOutcomes)
        if appliedBatches.count < BackgroundApplier.maximumQueuedBatches { appliedBatches.append(batch) }
        applying = false
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until every queued batch is applied; returns the outcomes counted since the last call.
    func waitUntilEmpty() -> IngestStatistics {
        condition.lock()
        defer { condition.unlock() }
        while !batches.isEmpty || applying { condition.wait() }
        defer { outcomes = IngestStatistics() }
        return outcomes
    }

    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }
}
