import PresenceModel

/// Where per-user presence lives: a thread-safe map from bare JID to `UserPresence`, with the knowledge of
/// what it lost.
///
/// All storages hold the same values (`UserPresence` aggregates, never reinterpreted) and differ only in
/// what they keep: ``DictionaryMemoryStorage`` keeps everything, ``NSCacheMemoryStorage`` and
/// ``LRUMemoryStorage`` evict. Every operation is safe to call from any thread or task.
public protocol MemoryStorage: AnyObject, Sendable {
    /// The storage's short name in reports: its kind's name (`dictionary`, `nscache`, `lru`).
    var name: String { get }

    /// The user's presence, or whether the storage lost them or never had them.
    func lookup(_ key: BareJID) -> StoredPresence

    /// Calls `body` with what ``lookup(_:)`` answers, the present user reduced to the resource their answer shows,
    /// with the same effects as `lookup` (an LRU's recency). The default looks up and aggregates; a storage that
    /// keeps users encoded reads the shown resource in place, and may run `body` under its lock: `body` must be
    /// short and must not call the storage.
    func withShownPresence<R>(_ key: BareJID, _ body: (StoredShownPresence) -> R) -> R

    /// Stores `value` for `key`, replacing any previous value.
    func set(_ value: UserPresence, for key: BareJID)

    /// Removes the user (not counted as a loss) and returns what was stored.
    @discardableResult
    func remove(_ key: BareJID) -> UserPresence?

    /// Removes every user (not counted as losses).
    func removeAll()

    /// How many users the storage holds.
    var count: Int { get }

    /// Atomically reads, changes and writes one user's value: two feeders updating the same user never lose
    /// each other's change, as a get followed by a set would. `body` gets nil for an absent user; setting the
    /// value to nil removes the user.
    func update<R>(_ key: BareJID, _ body: (inout UserPresence?) -> R) -> R

    /// Reacts to memory pressure as this kind of storage does, and says what it cost.
    @discardableResult
    func handle(_ pressure: MemoryPressure) -> PressureResponse

    var statistics: StorageStatistics { get }

    /// Every key the storage holds, in no particular order.
    var keys: [BareJID] { get }

    /// Installs the function told about every change of a user's visible status (an update that changes what a
    /// screen shows, a removal with its cause, a refill of a lost user), or removes it with nil.
    ///
    /// Changes arrive in the order the storage made them, one call at a time, never while the storage holds a
    /// lock (so the observer may call back into it). Without an observer a storage computes nothing for them.
    func setChangeObserver(_ observer: (@Sendable (StorageChange) -> Void)?)

    /// Applies one presence update to the user's stored value, atomically: what ``update(_:_:)`` with
    /// `UserPresence.apply(_:receivedAt:)` does, which is the default. Every update of every source goes through
    /// here, so a storage may do the same faster.
    func apply(_ update: PresenceUpdate, receivedAt: PresenceTime)

    /// The source vouches that the user's stored value is current (a snapshot found it so without changing it).
    /// A storage that restored the value from disk stops calling it restored; the default does nothing.
    func confirm(_ key: BareJID)

    // MARK: Capabilities
    // What a caller may ask of any storage; one without the capability answers with the default (no pins, no
    // tiers, nothing restored), so callers never need to know which storage they hold.

    /// Keeps `keys` from being evicted until they are unpinned as many times: users on someone's screen are not
    /// evicted (as SDWebImage keeps images still on screen after a memory warning).
    ///
    /// Pins are counted per user: two screens showing the same person pin them twice, and they stay pinned until
    /// both let go. A pinned user who is not stored yet is kept once stored. Pinned users are exempt from the count
    /// and cost limits and from memory pressure, so a storage may hold more than its limits while screens watch;
    /// ``StorageStatistics/pinned`` shows how many. The default does nothing: a storage that evicts nobody, or
    /// that evicts by rules of its own (`NSCache`), keeps no pins.
    func pin(_ keys: some Sequence<BareJID>)

    /// Releases one pin of each of `keys`; a user with no pin left is evictable again (most recently used).
    func unpin(_ keys: some Sequence<BareJID>)

    /// The user's value and the tier that answered it: `.memory`, `.disk`, or nil when no tier holds the user. The
    /// default is ``lookup(_:)`` answered by memory.
    func tieredLookup(_ key: BareJID) -> (stored: StoredPresence, tier: StorageTier?)

    /// Calls `body` with what ``withShownPresence(_:_:)`` answers when that answer needs no more words than the
    /// status (it is not from disk, not restored and not a miss a lower tier might fill), and returns its result;
    /// nil, without calling `body`, otherwise. The default always answers: a storage with one tier has nothing
    /// more to say.
    func withPlainShownPresence<R>(_ key: BareJID, _ body: (StoredShownPresence) -> R) -> R?

    /// When a user's value, restored from disk at start, was current; nil when it is current (never restored, or
    /// written or confirmed since). The default is nil.
    func restoredAsOf(_ key: BareJID) -> PresenceTime?

    /// Installs the function told about each restored user whose answer became current (``restoredAsOf(_:)``
    /// turns nil), or removes it with nil. The status may be the same as restored, so the change observer hears
    /// nothing though the answer loses its `asOf`. The default never calls it.
    func setRestoredObserver(_ observer: (@Sendable (BareJID) -> Void)?)

    /// How many parts ``keys(inPart:)`` gives the keys in: a caller that walks every key (a change stream's
    /// snapshot of everyone) copies one part at a time rather than every key before it can start. The default is 1.
    var keyPartCount: Int { get }

    /// The keys of part `part` (`0 ..< keyPartCount`), in no particular order. The parts hold every key, each in
    /// one part, so a walk over them misses nobody who stays stored throughout it and repeats nobody. The
    /// default's one part is ``keys``.
    func keys(inPart part: Int) -> [BareJID]

    /// The disk tier's counters; nil for a storage without one (the default).
    var diskTierStatistics: TierStatistics? { get }

    /// Whether ``apply(_:receivedAt:)`` stays in memory, so that a thread that must never wait, an event loop,
    /// may call it. True by default; false for a disk tier whose memory lets users go, which reads such a user
    /// from disk to apply an update to them.
    var appliesInMemory: Bool { get }

    /// Writes what the storage holds for durability now, on the caller's thread; true when nothing failed. The
    /// default has nothing to write.
    @discardableResult
    func flush() -> Bool

    /// Writes what is pending and releases what the storage holds open (files, threads); it answers from memory
    /// afterwards but writes nothing more. The default does nothing.
    func close()
}

extension MemoryStorage {
    public func confirm(_ key: BareJID) {}

    public func pin(_ keys: some Sequence<BareJID>) {}
    public func unpin(_ keys: some Sequence<BareJID>) {}

    public func tieredLookup(_ key: BareJID) -> (stored: StoredPresence, tier: StorageTier?) {
        let stored = lookup(key)
        return (stored, stored.presence == nil ? nil : .memory)
    }

    public func withPlainShownPresence<R>(_ key: BareJID, _ body: (StoredShownPresence) -> R) -> R? {
        withShownPresence(key, body)
    }

    public func restoredAsOf(_ key: BareJID) -> PresenceTime? { nil }
    public func setRestoredObserver(_ observer: (@Sendable (BareJID) -> Void)?) {}
    public var diskTierStatistics: TierStatistics? { nil }
    public var appliesInMemory: Bool { true }
    public var keyPartCount: Int { 1 }
    public func keys(inPart part: Int) -> [BareJID] { part == 0 ? keys : [] }
    @discardableResult
    public func flush() -> Bool { true }
    public func close() {}

    /// The user's presence if the storage holds it.
    public func get(_ key: BareJID) -> UserPresence? { lookup(key).presence }

    /// Looks the user up and shows the aggregated status's resource.
    public func withShownPresence<R>(_ key: BareJID, _ body: (StoredShownPresence) -> R) -> R {
        switch lookup(key) {
        case .present(let presence): ShownPresence.withShown(presence.status) { body(.present($0)) }
        case .lost(let cause): body(.lost(cause))
        case .unknown: body(.unknown)
        }
    }

    /// Applies one presence update to the user's stored value through ``update(_:_:)``.
    public func apply(_ update: PresenceUpdate, receivedAt: PresenceTime) {
        self.update(update.from.bare) { value in
            if value == nil { value = UserPresence() }
            value!.apply(update, receivedAt: receivedAt)
        }
    }
}
