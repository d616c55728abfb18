import Foundation
import PresenceStore

/// Applies presence updates to a storage on a thread of its own, in the order given, while the caller goes on
/// parsing the next ones: replaying a file keeps two cores busy instead of one.
///
/// Measured on a stream of 1,000,000 updates (README, issue 12): the storage's share of `query --input` was about a
/// fifth of its time, all of it spent waiting on memory while the parser waited for nothing. Updates cross in
/// batches of ``batchSize``; at most ``maximumQueuedBatches`` wait, and then the caller waits too, so memory stays
/// bounded however far the parser runs ahead.
///
/// One caller: ``enqueue(_:receivedAt:)`` and ``waitUntilApplied()`` are not called from two threads at once.
final class BackgroundApplier {
    static let batchSize = 512
    static let maximumQueuedBatches = 8

    private let queue = BatchQueue()
    private var batch: [(PresenceUpdate, PresenceTime)] = []

    init(storage: any MemoryStorage) {
        batch.reserveCapacity(BackgroundApplier.batchSize)
        let queue = self.queue
        let thread = Thread {
            while let batch = queue.next() {
                for (update, time) in batch { storage.apply(update, receivedAt: time) }
                queue.applied(batch)
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

    func enqueue(_ update: PresenceUpdate, receivedAt time: PresenceTime) {
        batch.append((update, time))
        if batch.count == BackgroundApplier.batchSize { handOver() }
    }

    /// Returns once every update enqueued so far is applied.
    func waitUntilApplied() {
        handOver()
        queue.waitUntilEmpty()
    }

    private func handOver() {
        guard !batch.isEmpty else { return }
        let recycled = queue.push(batch)
        // The applied batch comes back to be freed here: its strings were allocated on this thread, and freeing
        // them on the applying thread made every allocation here miss the allocator's thread cache.
        if var recycled {
            recycled.removeAll(keepingCapacity: true)
            batch = recycled
        } else {
            batch = []
            batch.reserveCapacity(BackgroundApplier.batchSize)
        }
    }
}

/// The batches between the caller and the applying thread.
///
/// `@unchecked Sendable`, proven by its lock: every stored property other than `condition` is read and written only
/// between `condition.lock()` and `condition.unlock()`, and `condition` itself is thread-safe.
private final class BatchQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var batches: [[(PresenceUpdate, PresenceTime)]] = []
    /// Applied batches, for the caller to free and reuse.
    private var appliedBatches: [[(PresenceUpdate, PresenceTime)]] = []
    private var applying = false
    private var closed = false

    /// Queues a batch, waiting while ``BackgroundApplier/maximumQueuedBatches`` are already queued; returns an
    /// applied batch, if there is one.
    @discardableResult
    func push(_ batch: [(PresenceUpdate, PresenceTime)]) -> [(PresenceUpdate, PresenceTime)]? {
        guard !batch.isEmpty else { return nil }
        condition.lock()
        defer { condition.unlock() }
        while batches.count >= BackgroundApplier.maximumQueuedBatches { condition.wait() }
        batches.append(batch)
        condition.broadcast()
        return appliedBatches.popLast()
    }

    /// The next batch to apply, waiting for one; nil once the queue is closed and empty.
    func next() -> [(PresenceUpdate, PresenceTime)]? {
        condition.lock()
        defer { condition.unlock() }
        while batches.isEmpty && !closed { condition.wait() }
        guard !batches.isEmpty else { return nil }
        applying = true
        condition.broadcast()
        return batches.removeFirst()
    }

    /// The batch returned by ``next()`` is applied.
    func applied(_ batch: [(PresenceUpdate, PresenceTime)]) {
        condition.lock()
        if appliedBatches.count < BackgroundApplier.maximumQueuedBatches { appliedBatches.append(batch) }
        applying = false
        condition.broadcast()
        condition.unlock()
    }

    func waitUntilEmpty() {
        condition.lock()
        while !batches.isEmpty || applying { condition.wait() }
        condition.unlock()
    }

    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }
}
