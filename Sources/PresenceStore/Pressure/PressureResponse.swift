/// What one pressure event cost a storage.
public struct PressureResponse: Hashable, Sendable {
    public var level: MemoryPressure
    /// Entries dropped because of this event.
    public var evicted: Int
    public var entriesBefore: Int
    public var entriesAfter: Int
    public var bytesBefore: Int
    public var bytesAfter: Int
    /// The storage kept everything and is above its memory budget (a non-evicting storage's way of saying it
    /// cannot help: Redis's `noeviction`, memcached's `-M`).
    public var overBudget: Bool

    public init(
        level: MemoryPressure, evicted: Int, entriesBefore: Int, entriesAfter: Int, bytesBefore: Int,
        bytesAfter: Int, overBudget: Bool
    ) {
        self.level = level
        self.evicted = evicted
        self.entriesBefore = entriesBefore
        self.entriesAfter = entriesAfter
        self.bytesBefore = bytesBefore
        self.bytesAfter = bytesAfter
        self.overBudget = overBudget
    }
}
