import PresenceStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Pressure from the process's own resident memory against a budget: `warning` from `warningFraction` of the
/// budget, `critical` at or above it. Reads `/proc/self/statm` (Linux), on every timer check and
/// every `checkEvery` applied updates.
public struct ResidentMemoryBudget: MemoryPressureSource {
    public let budgetBytes: Int
    public let warningFraction: Double
    public let checkEvery: Int

    public static let defaultWarningFraction = 0.85
    public static let defaultCheckEvery = 1000

    public init(budgetBytes: Int, warningFraction: Double = defaultWarningFraction, checkEvery: Int = defaultCheckEvery)
    {
        self.budgetBytes = max(budgetBytes, 1)
        self.warningFraction = min(max(warningFraction, 0), 1)
        self.checkEvery = max(checkEvery, 1)
    }

    public var description: String { "resident memory budget \(budgetBytes) bytes" }

    /// Reads the resident size on every timer check, and after every `checkEvery` applied updates.
    public func check(_ checkpoint: PressureCheckpoint) -> MemoryPressure? {
        if case .appliedUpdates(let applied) = checkpoint, applied % checkEvery != 0 { return nil }
        guard let resident = ProcessMemory.residentBytes() else { return nil }
        return level(forResidentBytes: resident)
    }

    /// The level for a given resident size; nil below the warning threshold.
    public func level(forResidentBytes resident: Int) -> MemoryPressure? {
        if resident >= budgetBytes { return .critical }
        if Double(resident) >= Double(budgetBytes) * warningFraction { return .warning }
        return nil
    }
}
