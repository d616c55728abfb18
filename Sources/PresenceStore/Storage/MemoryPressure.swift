/// How hard the process is pressed for memory, as iOS memory warnings and Linux PSI express it.
public enum MemoryPressure: String, Hashable, Sendable, CaseIterable, Comparable {
    case normal
    /// Memory is getting scarce: caches should shed what they can rebuild.
    case warning
    /// The process is at or over its budget: caches should drop everything they can.
    case critical

    public static func < (lhs: Self, rhs: Self) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

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

    public init(level: MemoryPressure, evicted: Int, entriesBefore: Int, entriesAfter: Int, bytesBefore: Int,
                bytesAfter: Int, overBudget: Bool) {
        self.level = level
        self.evicted = evicted
        self.entriesBefore = entriesBefore
        self.entriesAfter = entriesAfter
        self.bytesBefore = bytesBefore
        self.bytesAfter = bytesAfter
        self.overBudget = overBudget
    }
}
