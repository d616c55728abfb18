#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Pressure from the process's own resident memory against a budget: `warning` from `warningFraction` of the
/// budget, `critical` at or above it. Reads `/proc/self/statm` (Linux), throttled to every `checkEvery` updates.
public struct ResidentMemoryBudget: MemoryPressureSource {
    public let budgetBytes: Int
    public let warningFraction: Double
    public let checkEvery: Int

    public static let defaultWarningFraction = 0.85
    public static let defaultCheckEvery = 1000

    public init(budgetBytes: Int, warningFraction: Double = defaultWarningFraction, checkEvery: Int = defaultCheckEvery) {
        self.budgetBytes = max(budgetBytes, 1)
        self.warningFraction = min(max(warningFraction, 0), 1)
        self.checkEvery = max(checkEvery, 1)
    }

    public var description: String { "resident memory budget \(budgetBytes) bytes" }

    public func check(appliedUpdates: Int) -> MemoryPressure? {
        guard appliedUpdates % checkEvery == 0, let resident = ResidentMemoryBudget.residentBytes() else { return nil }
        return level(forResidentBytes: resident)
    }

    /// The level for a given resident size; nil below the warning threshold.
    public func level(forResidentBytes resident: Int) -> MemoryPressure? {
        if resident >= budgetBytes { return .critical }
        if Double(resident) >= Double(budgetBytes) * warningFraction { return .warning }
        return nil
    }

    /// The process's resident set size, or nil where `/proc/self/statm` cannot be read.
    public static func residentBytes() -> Int? {
        guard let file = fopen("/proc/self/statm", "r") else { return nil }
        defer { fclose(file) }
        var size = 0
        var resident = 0
        guard fscanf_statm(file, &size, &resident) else { return nil }
        return resident * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    private static func fscanf_statm(_ file: UnsafeMutablePointer<FILE>, _ size: inout Int, _ resident: inout Int) -> Bool {
        var buffer = [CChar](repeating: 0, count: 128)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return false }
        let fields = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).split(separator: " ")
        guard fields.count >= 2, let first = Int(fields[0]), let second = Int(fields[1]) else { return false }
        size = first
        resident = second
        return true
    }

    /// The peak resident set size so far (`VmHWM` in `/proc/self/status`), or nil where it cannot be read.
    public static func peakResidentBytes() -> Int? {
        guard let file = fopen("/proc/self/status", "r") else { return nil }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 256)
        while fgets(&buffer, Int32(buffer.count), file) != nil {
            let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard line.hasPrefix("VmHWM:") else { continue }
            let digits = line.dropFirst(6).filter(\.isNumber)
            return Int(digits).map { $0 * 1024 }
        }
        return nil
    }
}
