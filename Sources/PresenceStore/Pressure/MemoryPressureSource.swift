/// Something that tells when memory is scarce. Sources are checked as updates are applied (the replay) or on
/// a timer (the service); each answers the level to deliver now, if any.
public protocol MemoryPressureSource: Sendable {
    /// A short description for reports, such as `every 1000 updates: warning` or `PSI /proc/pressure/memory`.
    var description: String { get }

    /// The pressure to deliver now, given how many updates have been applied so far; nil for none.
    func check(appliedUpdates: Int) -> MemoryPressure?
}
