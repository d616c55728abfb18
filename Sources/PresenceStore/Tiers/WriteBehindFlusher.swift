import PresenceModel

/// Writes a disk tier's write-behind buffer to its disk store: on a thread of its own every flush interval, sooner
/// when asked (``flushSoon()``), and on the caller's thread for ``flush()`` and ``close()``.
///
/// Each flush moves the buffer's users aside (still answered from there), writes them in one transaction, and
/// updates the buffer's filter of users on disk; a failed flush puts them back under anything written since, to be
/// retried at the next interval.
final class WriteBehindFlusher: Sendable {
    /// The tier's buffer, shared with it.
    private let state: Locked<WriteBehind>
    /// Where the values of users buffered by key alone are read at flush time.
    private let memory: (any MemoryStorage)?
    private let memoryKeepsEveryone: Bool
    private let disk: any PresenceDiskStore
    private let onFlush: (@Sendable (FlushOutcome) -> Void)?
    /// Held for a whole flush.
    private let flushOrder = Locked(0)
    private let scheduler: FlushScheduler

    init(
        state: Locked<WriteBehind>, memory: (any MemoryStorage)?, memoryKeepsEveryone: Bool,
        disk: any PresenceDiskStore, interval: Duration, onFlush: (@Sendable (FlushOutcome) -> Void)?
    ) {
        self.state = state
        self.memory = memory
        self.memoryKeepsEveryone = memoryKeepsEveryone
        self.disk = disk
        self.onFlush = onFlush
        scheduler = FlushScheduler(interval: interval)
        scheduler.start { [weak self] in self?.flush() ?? false }
    }

    /// Asks the thread for a flush now rather than at the end of the interval.
    func flushSoon() { scheduler.flushSoon() }

    /// Stops the thread without flushing.
    func stop() { scheduler.stop() }

    /// Writes every buffered user now, on the caller's thread, after any flush in progress; true when something was
    /// written and nothing failed.
    @discardableResult
    func flush() -> Bool {
        // One flush at a time: a caller arriving during the thread's waits for it, then writes what is left.
        flushOrder.withLock { _ in flushNow() }
    }

    private func flushNow() -> Bool {
        let taken = state.withLock {
            state -> (values: [BareJID: UserPresence?], keys: [BareJID], clear: Bool)? in
            guard !state.closed, !state.dirty.isEmpty || !state.dirtyKeys.isEmpty || state.clearPending,
                state.flushing.isEmpty, state.flushingCount == 0
            else { return nil }
            // Moves, not copies: the batch is built outside the lock.
            state.flushing = state.dirty
            state.dirty = [:]
            let keys = state.dirtyKeys
            state.dirtyKeys = []
            state.flushingCount = state.flushing.count + keys.count
            return (state.flushing, keys, state.clearPending)
        }
        guard let taken else { return false }
        let started = ContinuousClock.now
        let time = PresenceTime.now()
        var batch = taken.values.map { (key: $0.key, value: $0.value) }
        let keys = Set(taken.keys)
        batch.reserveCapacity(batch.count + keys.count)
        for key in keys where taken.values[key] == nil {
            // Read now: the newest value; a write after this read marks the user dirty again.
            batch.append((key, memory?.lookup(key).presence))
        }
        let outcome: FlushOutcome
        do {
            let report = try disk.write(batch, clearingFirst: taken.clear, at: time)
            let elapsed = ContinuousClock.now - started
            let fileBytes = disk.fileBytes
            let rebuild = state.withLock { state -> Bool in
                if !memoryKeepsEveryone {
                    for (key, value) in batch where value != nil && !state.filter.mayContain(key) {
                        state.filter.insert(key)
                    }
                }
                state.failing = false
                state.flushing = [:]
                state.flushingCount = 0
                if taken.clear { state.clearPending = false }
                state.flushEpoch += 1
                state.flushes += 1
                state.usersWritten += report.users
                state.bytesWritten += report.bytes
                state.lastFlushAt = time
                state.lastFlushDuration = elapsed
                state.diskUsers = report.userCount
                state.fileBytes = fileBytes
                state.lastError = nil
                return state.filter.isOverCapacity
            }
            if rebuild { rebuildFilter() }
            outcome = FlushOutcome(users: report.users, bytes: report.bytes, duration: elapsed, error: nil)
        } catch {
            let elapsed = ContinuousClock.now - started
            state.withLock { state in
                // Back to the buffer, under anything written meanwhile: retried at the next flush.
                state.dirty.merge(state.flushing) { newer, _ in newer }
                state.dirtyKeys += keys
                // No more early flushes until the next interval: a full disk is retried once per interval.
                state.failing = true
                state.flushing = [:]
                state.flushingCount = 0
                if taken.clear { state.clearPending = true }
                state.failedFlushes += 1
                state.lastError = "\(error)"
            }
            outcome = FlushOutcome(users: 0, bytes: 0, duration: elapsed, error: "\(error)")
        }
        onFlush?(outcome)
        return outcome.error == nil
    }

    /// A filter past its capacity answers "maybe" too often: build one twice as big as the disk's users need, from
    /// the disk's keys.
    private func rebuildFilter() {
        let capacity = state.withLock { max($0.filter.capacity, $0.diskUsers) } * 2
        var filter = KeyFilter(capacity: capacity)
        guard (try? disk.forEach({ key, _ in filter.insert(key) })) != nil else { return }
        state.withLock { state in
            // Only this thread writes the disk, so the scan is complete; the buffer's keys are looked up there.
            state.filter = filter
        }
    }

    /// Flushes what is dirty, stops the thread and closes the disk store.
    func close() {
        scheduler.stop()
        while true {
            let pending = state.withLock { !$0.dirty.isEmpty || !$0.dirtyKeys.isEmpty || $0.clearPending }
            guard pending, flush() else { break }
        }
        state.withLock { $0.closed = true }
        disk.close()
    }
}
