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
