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
}

extension MemoryStorage {
    public func confirm(_ key: BareJID) {}

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
