import PresenceStore

/// Pressure at scripted points of a stream: after every N applied updates, or after given update counts.
/// Deterministic, for tests and for comparing storages on equal terms.
public struct ScriptedPressure: MemoryPressureSource {
    public enum Schedule: Hashable, Sendable {
        /// `level` after every `updates` applied updates.
        case every(updates: Int, level: MemoryPressure)
        /// The given level after exactly that many applied updates.
        case at([Int: MemoryPressure])
    }

    public let schedule: Schedule

    public init(_ schedule: Schedule) { self.schedule = schedule }

    public var description: String {
        switch schedule {
        case .every(let updates, let level): "every \(updates) updates: \(level.rawValue)"
        case .at(let points): "at \(points.keys.sorted().map(String.init).joined(separator: ", ")) updates"
        }
    }

    /// Counts applied updates only: a timer never triggers a script.
    public func check(_ checkpoint: PressureCheckpoint) -> MemoryPressure? {
        guard case .appliedUpdates(let appliedUpdates) = checkpoint else { return nil }
        switch schedule {
        case .every(let updates, let level):
            return updates > 0 && appliedUpdates > 0 && appliedUpdates % updates == 0 ? level : nil
        case .at(let points):
            return points[appliedUpdates]
        }
    }
}
