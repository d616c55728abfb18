import PresenceStore

/// Something that tells when memory is scarce. A replay checks its sources as updates are applied, the service
/// on a timer; each answers the level to deliver now, if any.
public protocol MemoryPressureSource: Sendable {
    /// A short description for reports, such as `every 1000 updates: warning` or `PSI /proc/pressure/memory`.
    var description: String { get }

    /// The pressure to deliver now, if any.
    func check(_ checkpoint: PressureCheckpoint) -> MemoryPressure?
}

/// When a source is asked.
public enum PressureCheckpoint: Hashable, Sendable {
    /// A replay has applied this many updates so far.
    case appliedUpdates(Int)
    /// A periodic check of a running service, whatever was applied.
    case timer
}
