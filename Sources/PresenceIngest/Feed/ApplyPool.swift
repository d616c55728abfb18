import Foundation
import PresenceStore
import XMPPStream

/// A fixed set of threads that decode parsed stanzas and apply their updates for any number of ingest sessions,
/// each session's stanzas in stream order, while the sessions' own threads go on parsing.
///
/// Parsing with libexpat and building the stanza tree is about half of ingest; decoding and storing is the rest
/// (Documentation/Benchmarks.md). Splitting the two keeps two cores busy on one stream. A service has up to
/// `maxConnections` feeders, so it shares one pool among them rather than starting a thread per feeder: each
/// session queues its batches in a lane of its own, a lane is applied by one thread at a time (so its order
/// holds), and the threads take turns over the lanes with work, one batch each, so a fast feeder cannot starve a
/// slow one.
///
/// The threads end once the pool is released and every lane's queued batches are applied; sessions keep their
/// pool alive.
public final class ApplyPool: Sendable {
    /// How many threads apply.
    public let threadCount: Int
    let scheduler = ApplyScheduler()

    /// - Parameters:
    ///   - threads: applying threads (at least one).
    ///   - name: the threads' name, as `ps -L` and profilers show it.
    public init(threads: Int, name: String = "presence-apply") {
        threadCount = max(threads, 1)
        for index in 0 ..< threadCount {
            let scheduler = self.scheduler
            let thread = Thread { scheduler.runApplying() }
            thread.name = threadCount == 1 ? name : "\(name)-\(index)"
            thread.start()
        }
    }

    deinit {
        scheduler.close()
    }

    /// The number of threads a service's pool gets by default: one per core.
    public static var defaultThreadCount: Int { ProcessInfo.processInfo.activeProcessorCount }
}

/// A stanza parsed and waiting to be decoded, with the time to give its update if it has no delay stamp.
typealias ParsedStanza = (stanza: Stanza, receivedAt: PresenceTime)

/// One session's queue in an ``ApplyPool``: what it applies to, and its batches.
///
/// `@unchecked Sendable`, proven by the scheduler's lock: the `let` properties are immutable and `Sendable`
/// (`storage` is `any MemoryStorage`, a `Sendable` protocol; `decoder` a `Sendable` struct; `onBatchApplied` a
/// `@Sendable` closure), and every `var` is read and written only by ``ApplyScheduler``'s methods between its
/// `condition.lock()` and `condition.unlock()`.
final class ApplyLane: @unchecked Sendable {
    let storage: any MemoryStorage
    let decoder: PresenceDecoder
    let onBatchApplied: (@Sendable (IngestStatistics) -> Void)?

    /// Batches waiting, oldest first.
    var queued: [[ParsedStanza]] = []
    /// Applied batches, for the session to give their stanzas back to its parser and free the rest on its own
    /// thread.
    var applied: [[ParsedStanza]] = []
    /// In the scheduler's ready list or being applied: never both, and never twice, so one thread at a time
    /// applies this lane.
    var scheduled = false
    var applying = false
    /// Outcomes (updates, ignored, rejected) of every stanza applied so far.
    var outcomes = IngestStatistics()
    /// Tasks suspended until the lane has room or is empty.
    var waiters: [(until: ApplyScheduler.Milestone, continuation: CheckedContinuation<Void, Never>)] = []

    init(
        storage: any MemoryStorage, decoder: PresenceDecoder,
        onBatchApplied: (@Sendable (IngestStatistics) -> Void)?
    ) {
        self.storage = storage
        self.decoder = decoder
        self.onBatchApplied = onBatchApplied
    }

    /// Decodes and applies a batch, outside any lock; returns its counts (stanzas and outcomes).
    func apply(_ batch: [ParsedStanza]) -> IngestStatistics {
        var counts = IngestStatistics()
        counts.stanzas = batch.count
        for (stanza, time) in batch {
            PresenceFeed.decode(stanza, with: decoder, counting: &counts) { update in
                storage.apply(update, receivedAt: time)
            }
        }
        onBatchApplied?(counts)
        return counts
    }
}

/// The lanes of an ``ApplyPool`` and the threads' turns over them, behind one lock.
///
/// `@unchecked Sendable`, proven by its lock: every stored property other than `condition` (and every `var` of the
/// lanes it is given) is read and written only between `condition.lock()` and `condition.unlock()`, and
/// `condition` itself is thread-safe.
final class ApplyScheduler: @unchecked Sendable {
    /// At most this many batches wait in a lane; a session feeding more waits for the applying threads.
    static let maximumQueuedBatches = 8

    /// What a suspended task waits for.
    enum Milestone {
        /// Fewer than half of ``maximumQueuedBatches`` waiting: room for the batches of a read without blocking.
        case room
        /// Nothing waiting or being applied.
        case empty

        func isReached(in lane: ApplyLane) -> Bool {
            switch self {
            case .room: lane.queued.count < ApplyScheduler.maximumQueuedBatches / 2
            case .empty: lane.queued.isEmpty && !lane.applying
            }
        }
    }

    private let condition = NSCondition()
    /// Lanes with batches and no thread applying them, in turn order.
    private var ready: [ApplyLane] = []
    private var readyStart = 0
    private var closed = false

    /// Queues a batch in `lane`, blocking while ``maximumQueuedBatches`` already wait there; returns an applied
    /// batch of the lane's, if there is one, for the caller to reuse.
    func push(_ batch: [ParsedStanza], to lane: ApplyLane) -> [ParsedStanza]? {
        condition.lock()
        defer { condition.unlock() }
        while lane.queued.count >= ApplyScheduler.maximumQueuedBatches { condition.wait() }
        lane.queued.append(batch)
        if !lane.scheduled {
            lane.scheduled = true
            ready.append(lane)
            condition.broadcast()
        }
        return lane.applied.popLast()
    }

    /// Blocks until everything queued in `lane` is applied.
    func waitUntilEmpty(_ lane: ApplyLane) {
        condition.lock()
        defer { condition.unlock() }
        while !Milestone.empty.isReached(in: lane) { condition.wait() }
    }

    /// Suspends (without blocking a thread) until `lane` reaches `milestone`.
    func wait(for milestone: Milestone, in lane: ApplyLane) async {
        await withCheckedContinuation { continuation in
            condition.lock()
            if milestone.isReached(in: lane) {
                condition.unlock()
                continuation.resume()
            } else {
                lane.waiters.append((milestone, continuation))
                condition.unlock()
            }
        }
    }

    /// Whether `lane` has reached `milestone` now.
    func hasReached(_ milestone: Milestone, in lane: ApplyLane) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return milestone.isReached(in: lane)
    }

    /// The outcomes of every stanza `lane` applied so far.
    func outcomes(of lane: ApplyLane) -> IngestStatistics {
        condition.lock()
        defer { condition.unlock() }
        return lane.outcomes
    }

    /// Applies lanes' batches until the pool is closed and nothing is queued: an applying thread's life.
    func runApplying() {
        condition.lock()
        while true {
            while readyStart == ready.count && !closed { condition.wait() }
            guard readyStart < ready.count else { break }
            let lane = ready[readyStart]
            readyStart += 1
            if readyStart == ready.count {
                ready.removeAll(keepingCapacity: true)
                readyStart = 0
            } else if readyStart >= 64 && readyStart * 2 >= ready.count {
                // Lanes that stay busy never empty the list: drop the taken turns now and then.
                ready.removeFirst(readyStart)
                readyStart = 0
            }
            let batch = lane.queued.removeFirst()
            lane.applying = true
            condition.broadcast()  // room in the lane for a blocked `push`
            condition.unlock()

            let counts = lane.apply(batch)

            condition.lock()
            if lane.applied.count < ApplyScheduler.maximumQueuedBatches { lane.applied.append(batch) }
            finishApplying(counts, in: lane)
            condition.broadcast()  // a blocked `waitUntilEmpty`, or another thread for the lane's next batch
        }
        condition.unlock()
    }

    /// Applies `batch` on the calling thread, if nothing of `lane`'s is queued or being applied (so the stream's
    /// order holds); false otherwise, and the caller queues it. The batch stays the caller's (it is not among the
    /// lane's applied batches). A few stanzas cost less to apply here than to hand to a pool thread: waking that
    /// thread, and the caller again, costs more than the applying itself when a live feed sends a handful of
    /// stanzas at a time (Documentation/Benchmarks.md, CPU per delivered event).
    func applyHereIfIdle(_ batch: [ParsedStanza], in lane: ApplyLane) -> Bool {
        condition.lock()
        guard !lane.scheduled && !lane.applying else {
            condition.unlock()
            return false
        }
        lane.applying = true
        condition.unlock()

        let counts = lane.apply(batch)

        // No broadcast: nothing waits on this lane while its only caller applies, and the pool's threads have
        // nothing new to take.
        condition.lock()
        finishApplying(counts, in: lane)
        condition.unlock()
        return true
    }

    /// Records what a batch of `lane`'s counted once applied, gives the lane's turn back, and resumes the tasks
    /// waiting for what that reached. Called with the lock held; returns with it held.
    private func finishApplying(_ counts: IngestStatistics, in lane: ApplyLane) {
        lane.outcomes.addOutcomes(of: counts)
        lane.applying = false
        if lane.queued.isEmpty {
            lane.scheduled = false
        } else {
            ready.append(lane)  // its next batch after the other lanes' turns
        }
        var resumed: [CheckedContinuation<Void, Never>] = []
        lane.waiters.removeAll { waiter in
            guard waiter.until.isReached(in: lane) else { return false }
            resumed.append(waiter.continuation)
            return true
        }
        if !resumed.isEmpty {
            condition.unlock()
            for continuation in resumed { continuation.resume() }
            condition.lock()
        }
    }

    /// Lets the threads end once every queued batch is applied.
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }
}
