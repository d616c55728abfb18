import PresenceModel

/// A storage that can keep chosen users from being evicted while someone is looking at them: entries on screen
/// are not evicted (as SDWebImage keeps images still on screen after a memory warning).
///
/// Pins are counted per user: two screens showing the same person pin them twice, and they stay pinned until
/// both let go. A pinned user who is not stored yet is kept once stored. Pinned users are exempt from the count
/// and cost limits and from memory pressure, so a storage may hold more than its limits while screens watch;
/// ``StorageStatistics/pinned`` shows how many, and the limits apply again as soon as the pins are released.
public protocol PinningStorage: MemoryStorage {
    /// Keeps `keys` from being evicted until they are unpinned as many times.
    func pin(_ keys: some Sequence<BareJID>)
    /// Releases one pin of each of `keys`; a user with no pin left is evictable again (most recently used).
    func unpin(_ keys: some Sequence<BareJID>)
}
