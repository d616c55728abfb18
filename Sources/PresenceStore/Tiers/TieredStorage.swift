import PresenceModel
import Synchronization

/// Any ``MemoryStorage`` with a disk tier under it: users survive restarts and crashes, and a user the memory
/// evicts is read back from disk, slower, instead of being lost (as Kingfisher's and SDWebImage's caches fall
/// back from memory to disk).
///
/// Memory stays the authority and never waits for the disk: a write changes memory and marks the user dirty, and
/// a flusher thread writes each dirty user's latest value in one transaction every
/// ``Configuration/flushInterval``, or sooner once ``Configuration/flushDirtyThreshold`` users are dirty. Until
/// then the value is held in the write-behind buffer, so an evicted dirty user is never lost. With no memory
/// storage (`disk` alone) every read that the buffer cannot answer goes to the disk: the slow end of the
/// comparison.
///
/// Accounting with two tiers: an eviction from memory is a *spill*, not a loss; a lookup answers `lost` only
/// when neither tier holds the user. ``TierStatistics`` tells memory hits, disk hits and misses apart.
///
/// A tier opened on a store that holds users restores them before it answers: into a memory that keeps everyone,
/// while an evicting memory starts empty and reads users from disk as they are asked for. Each restored user says
/// so (``restoredAsOf(_:)``) until they are written again or ``confirm(_:)`` says the source vouched for them.
public final class TieredStorage: MemoryStorage {
    /// How often and how eagerly the write-behind buffer is flushed.
    public struct Configuration: Hashable, Sendable {
        /// The longest a changed user waits in memory before it is written (`--disk-flush-interval`).
        public var flushInterval: Duration
        /// Changes waiting for the disk that start a flush before the interval is up (`--disk-flush-dirty`): dirty
        /// users, or, over a memory that keeps everyone, updates logged since the last flush.
        public var flushDirtyThreshold: Int

        public static let defaultFlushInterval: Duration = .seconds(1)
        public static let defaultFlushDirtyThreshold = 50_000

        public init(
            flushInterval: Duration = defaultFlushInterval, flushDirtyThreshold: Int = defaultFlushDirtyThreshold
        ) {
            self.flushInterval = flushInterval
            self.flushDirtyThreshold = max(flushDirtyThreshold, 1)
        }
    }

    public let name: String
    /// The memory tier; nil for a disk-only tier.
    public let memory: (any MemoryStorage)?
    public let disk: any PresenceDiskStore
    public let configuration: Configuration
    /// What the store's last write before this process was current as of; nil when it restored nothing.
    public var restoredAt: PresenceTime? { restore.restoredAt }
    /// The memory tier never evicts (a ``DictionaryMemoryStorage``): it holds every user of the tier, so a write
    /// only marks the user dirty and the flusher reads the value from memory (measured: the disk tier then costs
    /// ingest little), and no update ever needs the disk.
    let memoryKeepsEveryone: Bool

    /// The write-behind buffer, shared with ``flusher``.
    let state: Locked<WriteBehind>
    /// Writes the buffer to disk, on a thread of its own.
    private let flusher: WriteBehindFlusher
    /// The users restored from disk whose status is not known to be current yet.
    let restore: RestoreTracker
    /// Serializes read-modify-write of a disk-only tier (a memory tier's own lock orders them otherwise).
    private let diskOnlyOrder = Locked(0)
    private let changes = ChangePublisher()
    let counters = TierCounters()

    /// - Parameters:
    ///   - memory: the memory tier, nil for disk only. It should be empty: the tier fills it from the disk when
    ///     it keeps everyone.
    ///   - disk: the store on disk the tier writes behind to and reads from.
    ///   - configuration: how often and how soon it flushes.
    ///   - name: the name in reports; `KIND+disk` or `disk` when nil.
    ///   - onFlush: told about every flush that wrote something or failed (logs, metrics).
    /// - Throws: what the disk store throws while the tier restores from it.
    public init(
        memory: (any MemoryStorage)?, disk: any PresenceDiskStore, configuration: Configuration = .init(),
        name: String? = nil, onFlush: (@Sendable (FlushOutcome) -> Void)? = nil
    ) throws {
        self.memory = memory
        self.disk = disk
        self.configuration = configuration
        self.name = name ?? memory.map { "\($0.name)+disk" } ?? "disk"
        memoryKeepsEveryone = memory is DictionaryMemoryStorage
        var behind = WriteBehind(filter: KeyFilter(capacity: disk.userCount * 2))
        var restored = Set<Int>(minimumCapacity: disk.userCount)
        // Only a memory that keeps everyone is filled: an evicting one would take every user and evict most of
        // them again, each eviction a loss its ledger remembers (measured: 1.7 s more for a million users and an
        // LRU of 100,000). It fills from disk as users are read.
        let filled = memoryKeepsEveryone ? memory : nil
        (filled as? DictionaryMemoryStorage)?.reserveCapacity(disk.userCount)
        try disk.forEach { key, value in
            filled?.set(value, for: key)
            let hash = key.hashValue
            behind.filter.insert(hash: hash)
            restored.insert(hash)
            behind.users += 1
        }
        behind.diskUsers = behind.users
        behind.fileBytes = disk.fileBytes
        restore = RestoreTracker(restored: restored, asOf: behind.users > 0 ? disk.lastWrite : nil)
        state = Locked(behind)
        flusher = WriteBehindFlusher(
            state: state, memory: memory, memoryKeepsEveryone: memoryKeepsEveryone, disk: disk,
            interval: configuration.flushInterval, onFlush: onFlush)
    }

    deinit { flusher.stop() }

    /// When a restored user's status was current, until it is written again or confirmed; nil otherwise.
    public func restoredAsOf(_ key: BareJID) -> PresenceTime? { restore.restoredAsOf(key) }

    /// The source vouched for the user's stored value (a snapshot found it current): it is no longer restored.
    public func confirm(_ key: BareJID) { restore.markCurrent(key) }

    /// Calls `observer` with each user restored from disk whose answer became current, written or confirmed
    /// since (``restoredAsOf(_:)`` turns nil), after the write if there was one. The status may be the same as
    /// restored (the server found it so), so the change observer hears nothing, though an answer loses its
    /// `asOf`: a change stream sends the user's answer again on this call.
    public func setRestoredObserver(_ observer: (@Sendable (BareJID) -> Void)?) { restore.setObserver(observer) }

    /// Users restored from disk and neither written nor confirmed since.
    public var restoredCount: Int { restore.count }

    // MARK: Writes

    public func update<R>(_ key: BareJID, _ body: (inout UserPresence?) -> R) -> R {
        let (result, written) = readModifyWrite(key, body)
        changes.deliver()
        if let written { wrote(key, dirty: written) }
        return result
    }

    /// After a write of `key` left `dirty` users waiting for the disk: the user is current, and a full buffer is
    /// flushed early.
    private func wrote(_ key: BareJID, dirty: Int) {
        restore.markCurrent(key)
        if dirty >= configuration.flushDirtyThreshold { flusher.flushSoon() }
    }

    /// The body's result, and the dirty count after the write; nil when nothing was written.
    private func readModifyWrite<R>(_ key: BareJID, _ body: (inout UserPresence?) -> R) -> (R, Int?) {
        func change(_ stored: inout UserPresence?) -> (R, Int?) {
            let old = stored ?? (memoryKeepsEveryone ? nil : valueBeyondMemory(key))
            var new = old
            let result = body(&new)
            stored = new
            return (result, record(key, old: old, new: new))
        }
        if let memory { return memory.update(key) { change(&$0) } }
        return diskOnlyOrder.withLock { _ in
            var stored: UserPresence?
            return change(&stored)
        }
    }

    /// Marks the user dirty with their new value, and returns the dirty count; nil when nothing was written.
    /// Called in the user's write order.
    private func record(_ key: BareJID, old: UserPresence?, new: UserPresence?) -> Int? {
        if old == nil && new == nil { return nil }
        // A memory that keeps everyone publishes its own changes, which are the tier's.
        if !memoryKeepsEveryone { changes.publishUpdate(key, old: old, new: new) }
        return state.withLock { state in
            // A memory that keeps everyone has the newest value at flush time, whatever wrote it since.
            if memoryKeepsEveryone { state.dirtyKeys.append(key) } else { state.dirty[key] = .some(new) }
            switch (old, new) {
            case (nil, _?): state.users += 1
            case (_?, nil):
                state.users -= 1
                state.removals[.explicit, default: 0] += 1
            default: break
            }
            return state.dirtyCountForFlush
        }
    }

    public func set(_ value: UserPresence, for key: BareJID) {
        let replaced = update(key) { stored -> Bool in
            defer { stored = value }
            return stored != nil
        }
        if replaced { state.withLock { $0.removals[.replaced, default: 0] += 1 } }
    }

    @discardableResult
    public func remove(_ key: BareJID) -> UserPresence? {
        update(key) { stored in
            defer { stored = nil }
            return stored
        }
    }

    public func removeAll() {
        // Each user leaving is a change a screen shows; without an observer nobody reads the users first.
        var removed: [(key: BareJID, value: UserPresence)] = []
        if changes.isObserved {
            for key in keys { if let value = lookup(key).presence { removed.append((key, value)) } }
        }
        diskOnlyOrder.withLock { _ in
            for (key, value) in removed { changes.publishRemoval(key, old: value, cause: .explicit) }
            let users = count
            memory?.removeAll()
            state.withLock { state in
                state.removals[.explicit, default: 0] += users
                state.users = 0
                state.dirty = [:]
                state.dirtyKeys = []
                state.flushing = [:]
                state.clearPending = true
                state.filter = KeyFilter(capacity: state.filter.capacity)
            }
        }
        restore.forgetAll()
        changes.deliver()
        flusher.flushSoon()
    }

    public var count: Int {
        if let memory, memoryKeepsEveryone { return memory.count }
        return state.withLock { $0.users }
    }

    public var keys: [BareJID] {
        if let memory, memoryKeepsEveryone { return memory.keys }
        var keys = Set<BareJID>()
        if let memory { keys.formUnion(memory.keys) }
        let (clear, pending) = state.withLock { ($0.clearPending, $0.flushing.merging($0.dirty) { $1 }) }
        if !clear { try? disk.forEach { key, _ in keys.insert(key) } }
        for (key, value) in pending {
            if value == nil { keys.remove(key) } else { keys.insert(key) }
        }
        return Array(keys)
    }

    /// A memory that keeps everyone gives its own parts; otherwise the keys of memory, disk and pending writes are
    /// merged in one part.
    public var keyPartCount: Int {
        if let memory, memoryKeepsEveryone { return memory.keyPartCount }
        return 1
    }

    public func keys(inPart part: Int) -> [BareJID] {
        if let memory, memoryKeepsEveryone { return memory.keys(inPart: part) }
        return part == 0 ? keys : []
    }

    public func apply(_ update: PresenceUpdate, receivedAt: PresenceTime) {
        // A memory that keeps everyone needs no merge with the disk and has the value at flush time: its own
        // (fast) apply, which also publishes the change, and the key marked dirty.
        if let memory, memoryKeepsEveryone {
            let key = update.from.bare
            memory.apply(update, receivedAt: receivedAt)
            // Appended, not inserted in a set: hashing each key here cost the ingest path as much as the memory's
            // own apply (measured); the flusher coalesces the keys on its own thread.
            let dirty = state.withLock { state in
                state.dirtyKeys.append(key)
                return state.dirtyCountForFlush
            }
            wrote(key, dirty: dirty)
            return
        }
        self.update(update.from.bare) { value in
            if value == nil { value = UserPresence() }
            value!.apply(update, receivedAt: receivedAt)
        }
    }

    // MARK: Pressure, pins, observers

    /// The memory tier sheds what its kind sheds; the users it drops stay on disk (or in the buffer until their
    /// flush), so the tier drops no one.
    @discardableResult
    public func handle(_ pressure: MemoryPressure) -> PressureResponse {
        let users = count
        let memoryResponse = memory?.handle(pressure)
        state.withLock { $0.pressureEvents[pressure, default: 0] += 1 }
        return PressureResponse(
            level: pressure, evicted: 0, entriesBefore: users, entriesAfter: count,
            bytesBefore: memoryResponse?.bytesBefore ?? 0, bytesAfter: memoryResponse?.bytesAfter ?? 0,
            overBudget: memoryResponse?.overBudget ?? false)
    }

    public func pin(_ keys: some Sequence<BareJID>) { memory?.pin(keys) }

    public func unpin(_ keys: some Sequence<BareJID>) { memory?.unpin(keys) }

    /// A memory that keeps everyone has the tier's every change (it drops no one), so it publishes them, from its
    /// own fast paths; otherwise the tier does, and a spill to disk is no change.
    public func setChangeObserver(_ observer: (@Sendable (StorageChange) -> Void)?) {
        if let memory, memoryKeepsEveryone {
            memory.setChangeObserver(observer)
        } else {
            changes.setObserver(observer)
        }
    }

    public var statistics: StorageStatistics {
        let memoryStatistics = memory?.statistics
        let users = count
        return state.withLock { state in
            StorageStatistics(
                entries: users, estimatedBytes: memoryStatistics?.estimatedBytes ?? 0,
                removals: state.removals, lost: 0, pressureEvents: state.pressureEvents,
                pinned: memoryStatistics?.pinned ?? 0)
        }
    }

    public var diskTierStatistics: TierStatistics? { tierStatistics }
    /// A memory that keeps everyone has every user to apply to; one that lets users go reads them from disk.
    public var appliesInMemory: Bool { memoryKeepsEveryone }

    /// The disk tier's counters and the memory tier's spills.
    public var tierStatistics: TierStatistics {
        let spilled = memory?.statistics.evictions ?? [:]
        let restoredUsers = restore.count
        return state.withLock { state in
            TierStatistics(
                memoryHits: counters.memoryHits.load(ordering: .relaxed),
                diskHits: counters.diskHits.load(ordering: .relaxed),
                misses: counters.misses.load(ordering: .relaxed),
                diskReads: counters.diskReads.load(ordering: .relaxed),
                diskReadErrors: counters.diskReadErrors.load(ordering: .relaxed),
                spilled: spilled, dirty: state.dirty.count + state.dirtyKeys.count + state.flushingCount,
                restored: restoredUsers,
                restoredAt: restoredAt, flushes: state.flushes, failedFlushes: state.failedFlushes,
                usersWritten: state.usersWritten, bytesWritten: state.bytesWritten,
                lastFlushAt: state.lastFlushAt, lastFlushDuration: state.lastFlushDuration,
                diskUsers: state.diskUsers, fileBytes: state.fileBytes, lastError: state.lastError)
        }
    }

    // MARK: Flushing

    /// Writes every dirty user now, on the caller's thread, after any flush in progress; true when something was
    /// written and nothing failed. The flusher calls it on its own; ``close()`` calls it once more.
    @discardableResult
    public func flush() -> Bool { flusher.flush() }

    /// Flushes what is dirty, stops the flusher and closes the disk store. The tier answers from memory
    /// afterwards but writes nothing more.
    public func close() { flusher.close() }
}
