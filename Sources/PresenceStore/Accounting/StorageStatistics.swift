/// A storage's counters at one moment.
public struct StorageStatistics: Hashable, Sendable {
    public var entries: Int
    /// Heap bytes the storage estimates it holds (its own structures, keys and values).
    public var estimatedBytes: Int
    /// Removals by cause, explicit and replaced included.
    public var removals: [RemovalCause: Int]
    /// Users the storage lost and has not been given again.
    public var lost: Int
    /// Pressure events handled, by level.
    public var pressureEvents: [MemoryPressure: Int]
    /// Users held whatever the limits, because someone is watching them (``MemoryStorage/pin(_:)``).
    public var pinned: Int

    public init(
        entries: Int = 0, estimatedBytes: Int = 0, removals: [RemovalCause: Int] = [:], lost: Int = 0,
        pressureEvents: [MemoryPressure: Int] = [:], pinned: Int = 0
    ) {
        self.entries = entries
        self.estimatedBytes = estimatedBytes
        self.removals = removals
        self.lost = lost
        self.pressureEvents = pressureEvents
        self.pinned = pinned
    }

    /// Removals the storage decided on its own (count and cost limits, expiry, pressure).
    public var evictions: [RemovalCause: Int] { removals.filter { $0.key.isEviction } }
}
