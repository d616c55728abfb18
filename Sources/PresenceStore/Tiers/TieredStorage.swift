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
    public let restoredAt: PresenceTime?
    /// The memory tier never evicts (a ``DictionaryMemoryStorage``): it holds every user of the tier, so a write
    /// only marks the user dirty and the flusher reads the value from memory (measured: the disk tier then costs
    /// ingest little), and no update ever needs the disk.
    private let memoryKeepsEveryone: Bool

    private let state: Locked<WriteBehind>
    /// Serializes read-modify-write of a disk-only tier (a memory tier's own lock orders them otherwise).
    private let diskOnlyOrder = Locked(0)
    /// Held for a whole flush.
    private let flushOrder = Locked(0)
    private let changes = ChangePublisher()
    /// Told of each restored user whose answer became current: see ``setRestoredObserver(_:)``.
    private let restoredObserver = Locked<(@Sendable (BareJID) -> Void)?>(nil)
    private let counters = Counters()
    private let onFlush: (@Sendable (FlushOutcome) -> Void)?
    private let scheduler: FlushScheduler

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
        self.onFlush = onFlush
        var behind = WriteBehind(filter: KeyFilter(capacity: disk.userCount * 2))
        behind.restored.reserveCapacity(disk.userCount)
        // Only a memory that keeps everyone is filled: an evicting one would take every user and evict most of
        // them again, each eviction a loss its ledger remembers (measured: 1.7 s more for a million users and an
        // LRU of 100,000). It fills from disk as users are read.
        let filled = memoryKeepsEveryone ? memory : nil
        (filled as? DictionaryMemoryStorage)?.reserveCapacity(disk.userCount)
        try disk.forEach { key, value in
            filled?.set(value, for: key)
            let hash = key.hashValue
            behind.filter.insert(hash: hash)
            behind.restored.insert(hash)
            behind.users += 1
        }
        behind.diskUsers = behind.users
        behind.fileBytes = disk.fileBytes
        restoredAt = behind.users > 0 ? disk.lastWrite : nil
        if restoredAt == nil { behind.restored = [] }
        state = Locked(behind)
        scheduler = FlushScheduler(interval: configuration.flushInterval)
        scheduler.start { [weak self] in self?.flush() ?? false }
        counters.anyRestored.store(restoredAt != nil, ordering: .relaxed)
    }

    deinit { scheduler.stop() }

    // MARK: Reads

    public func lookup(_ key: BareJID) -> StoredPresence { tieredLookup(key).stored }

    /// The user's value and the tier that answered: `.memory` (the memory storage or the write-behind buffer),
    /// `.disk`, or nil when neither holds them.
    public func tieredLookup(_ key: BareJID) -> (stored: StoredPresence, tier: StorageTier?) {
        var inMemory = StoredPresence.unknown
        if let memory {
            inMemory = memory.lookup(key)
            if case .present = inMemory {
                counters.memoryHits.add(1, ordering: .relaxed)
                return (inMemory, .memory)
            }
        }
        return beyondMemory(key, memoryAnswer: inMemory)
    }

    public func withShownPresence<R>(_ key: BareJID, _ body: (StoredShownPresence) -> R) -> R {
        var inMemory = StoredPresence.unknown
        if let memory {
            let hit: ShownOrMiss<R> = memory.withShownPresence(key) { stored in
                switch stored {
                case .present: .hit(body(stored))
                case .lost(let cause): .miss(.lost(cause))
                case .unknown: .miss(.unknown)
                }
            }
            switch hit {
            case .hit(let result):
                counters.memoryHits.add(1, ordering: .relaxed)
                return result
            case .miss(let answer): inMemory = answer
            }
        }
        switch beyondMemory(key, memoryAnswer: inMemory).stored {
        case .present(let presence): return ShownPresence.withShown(presence.status) { body(.present($0)) }
        case .lost(let cause): return body(.lost(cause))
        case .unknown: return body(.unknown)
        }
    }

    /// Calls `body` with the memory tier's answer for a user it holds who was not restored (or confirmed since),
    /// and returns its result; nil, without calling `body`, otherwise.
    public func withPlainShownPresence<R>(_ key: BareJID, _ body: (StoredShownPresence) -> R) -> R? {
        guard let memory else { return nil }
        if restoredAsOf(key) != nil { return nil }
        let result: R? = memory.withShownPresence(key) { stored in
            if case .present = stored { body(stored) } else { nil }
        }
        if result != nil { counters.memoryHits.add(1, ordering: .relaxed) }
        return result
    }

    private enum ShownOrMiss<R> {
        case hit(R)
        case miss(StoredPresence)
    }

    /// Where a user missing from memory is: the buffer, maybe the disk, or nowhere.
    private enum Beyond {
        case buffered(UserPresence?)
        case nowhere
        case maybeOnDisk(epoch: Int)
    }

    private func whereBeyondMemory(_ key: BareJID) -> Beyond {
        state.withLock { state in
            if let buffered = state.buffered(key) { return .buffered(buffered) }
            if state.clearPending || !state.filter.mayContain(key) { return .nowhere }
            return .maybeOnDisk(epoch: state.flushEpoch)
        }
    }

    private func beyondMemory(_ key: BareJID, memoryAnswer: StoredPresence) -> (stored: StoredPresence, tier: StorageTier?) {
        if memoryKeepsEveryone {
            counters.misses.add(1, ordering: .relaxed)
            return (memoryAnswer, nil)
        }
        switch whereBeyondMemory(key) {
        case .buffered(let value?):
            counters.memoryHits.add(1, ordering: .relaxed)
            return (.present(value), .memory)
        case .buffered(nil):
            return (.unknown, nil)
        case .nowhere:
            counters.misses.add(1, ordering: .relaxed)
            return (memoryAnswer, nil)
        case .maybeOnDisk(let epoch):
            guard let value = readDisk(key) else {
                counters.misses.add(1, ordering: .relaxed)
                return (memoryAnswer, nil)
            }
            counters.diskHits.add(1, ordering: .relaxed)
            promote(key, value, readAt: epoch)
            return (.present(value), .disk)
        }
    }

    private func readDisk(_ key: BareJID) -> UserPresence? {
        counters.diskReads.add(1, ordering: .relaxed)
        do {
            return try disk.read(key)
        } catch {
            counters.diskReadErrors.add(1, ordering: .relaxed)
            state.withLock { $0.lastError = "\(error)" }
            return nil
        }
    }

    /// Puts a disk hit back in memory, unless the user was written since the read (then memory or the buffer
    /// has the newer value, or a flush moved it to disk after the read).
    private func promote(_ key: BareJID, _ value: UserPresence, readAt epoch: Int) {
        guard let memory else { return }
        memory.update(key) { stored in
            guard stored == nil else { return }
            let unchanged = state.withLock { $0.buffered(key) == nil && $0.flushEpoch == epoch && !$0.clearPending }
            if unchanged { stored = value }
        }
    }

    /// The user's value outside memory, read under the caller's write order for the user.
    private func valueBeyondMemory(_ key: BareJID) -> UserPresence? {
        switch whereBeyondMemory(key) {
        case .buffered(let value): value
        case .nowhere: nil
        case .maybeOnDisk: readDisk(key)
        }
    }

    /// When a restored user's status was current, until it is written again or confirmed; nil otherwise.
    public func restoredAsOf(_ key: BareJID) -> PresenceTime? {
        // Asked on every lookup: once every restored user is current, no lock is taken for it again.
        guard let restoredAt, counters.anyRestored.load(ordering: .relaxed) else { return nil }
        return state.withLock { state in
            if state.restored.isEmpty {
                counters.anyRestored.store(false, ordering: .relaxed)
                return nil
            }
            return state.restored.contains(key.hashValue) ? restoredAt : nil
        }
    }

    /// The source vouched for the user's stored value (a snapshot found it current): it is no longer restored.
    public func confirm(_ key: BareJID) {
        guard restoredAt != nil else { return }
        let wasRestored = state.withLock { $0.markCurrent(key) }
        if wasRestored { tellRestoredObserver(key) }
    }

    /// Calls `observer` with each user restored from disk whose answer became current, written or confirmed
    /// since (``restoredAsOf(_:)`` turns nil), after the write if there was one. The status may be the same as
    /// restored (the server found it so), so the change observer hears nothing, though an answer loses its
    /// `asOf`: a change stream sends the user's answer again on this call.
    public func setRestoredObserver(_ observer: (@Sendable (BareJID) -> Void)?) {
        restoredObserver.withLock { $0 = observer }
    }

    private func tellRestoredObserver(_ key: BareJID) {
        if let observer = restoredObserver.withLock({ $0 }) { observer(key) }
    }

    /// Users restored from disk and neither written nor confirmed since.
    public var restoredCount: Int { state.withLock { $0.restored.count } }

    // MARK: Writes

    public func update<R>(_ key: BareJID, _ body: (inout UserPresence?) -> R) -> R {
        let (result, written) = readModifyWrite(key, body)
        changes.deliver()
        if written.wasRestored { tellRestoredObserver(key) }
        if written.dirty >= configuration.flushDirtyThreshold { scheduler.flushSoon() }
        return result
    }

    /// What marking a written user did: the dirty count after it, and whether the user was restored until then.
    private struct Written {
        var dirty = 0
        var wasRestored = false
    }

    private func readModifyWrite<R>(_ key: BareJID, _ body: (inout UserPresence?) -> R) -> (R, Written) {
        func change(_ stored: inout UserPresence?) -> (R, Written) {
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

    /// Marks the user dirty with their new value; called in the user's write order.
    private func record(_ key: BareJID, old: UserPresence?, new: UserPresence?) -> Written {
        if old == nil && new == nil { return Written() }
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
            return Written(dirty: state.dirtyCountForFlush, wasRestored: state.markCurrent(key))
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
                state.restored = []
                state.clearPending = true
                state.filter = KeyFilter(capacity: state.filter.capacity)
            }
        }
        changes.deliver()
        scheduler.flushSoon()
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

    public func apply(_ update: PresenceUpdate, receivedAt: PresenceTime) {
        // A memory that keeps everyone needs no merge with the disk and has the value at flush time: its own
        // (fast) apply, which also publishes the change, and the key marked dirty.
        if let memory, memoryKeepsEveryone {
            let key = update.from.bare
            memory.apply(update, receivedAt: receivedAt)
            // Appended, not inserted in a set: hashing each key here cost the ingest path as much as the memory's
            // own apply (measured); the flusher coalesces the keys on its own thread.
            let written = state.withLock { state in
                state.dirtyKeys.append(key)
                return Written(dirty: state.dirtyCountForFlush, wasRestored: state.markCurrent(key))
            }
            if written.wasRestored { tellRestoredObserver(key) }
            if written.dirty >= configuration.flushDirtyThreshold { scheduler.flushSoon() }
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

    /// The disk tier's counters and the memory tier's spills.
    public var tierStatistics: TierStatistics {
        let spilled = memory?.statistics.evictions ?? [:]
        return state.withLock { state in
            TierStatistics(
                memoryHits: counters.memoryHits.load(ordering: .relaxed),
                diskHits: counters.diskHits.load(ordering: .relaxed),
                misses: counters.misses.load(ordering: .relaxed),
                diskReads: counters.diskReads.load(ordering: .relaxed),
                diskReadErrors: counters.diskReadErrors.load(ordering: .relaxed),
                spilled: spilled, dirty: state.dirty.count + state.dirtyKeys.count + state.flushingCount, restored: state.restored.count,
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
    public func flush() -> Bool {
        // One flush at a time: a caller arriving during the flusher's waits for it, then writes what is left.
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

    /// Flushes what is dirty, stops the flusher and closes the disk store. The tier answers from memory
    /// afterwards but writes nothing more.
    public func close() {
        scheduler.stop()
        while true {
            let pending = state.withLock { !$0.dirty.isEmpty || !$0.dirtyKeys.isEmpty || $0.clearPending }
            guard pending, flush() else { break }
        }
        state.withLock { $0.closed = true }
        disk.close()
    }
}

extension TieredStorage {
    /// The write-behind buffer and what the tier counts under its lock.
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
        /// Hashes of users restored from disk and not written or confirmed since.
        var restored: Set<Int> = []

        /// The user is current (written or confirmed): true when they were restored until now.
        mutating func markCurrent(_ key: BareJID) -> Bool {
            restored.isEmpty ? false : restored.remove(key.hashValue) != nil
        }
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

    /// Counters bumped on the read path without the lock.
    final class Counters: Sendable {
        let memoryHits = Atomic<Int>(0)
        let diskHits = Atomic<Int>(0)
        let misses = Atomic<Int>(0)
        let diskReads = Atomic<Int>(0)
        let diskReadErrors = Atomic<Int>(0)
        /// Some restored user may not be current yet (cleared once none is).
        let anyRestored = Atomic<Bool>(false)
    }
}

/// Which tier answered a lookup.
public enum StorageTier: String, Hashable, Sendable, CustomStringConvertible {
    case memory
    case disk

    public var description: String { rawValue }
}

/// One flush, as ``TieredStorage`` reports it.
public struct FlushOutcome: Hashable, Sendable {
    public var users: Int
    public var bytes: Int
    public var duration: Duration
    /// The disk's error; the users stay dirty and are written at the next flush.
    public var error: String?
}
