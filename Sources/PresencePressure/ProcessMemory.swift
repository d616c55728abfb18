#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's own memory as Linux reports it in `/proc/self`.
public enum ProcessMemory {
    /// The resident set size, or nil where `/proc/self/statm` cannot be read.
    public static func residentBytes() -> Int? {
        guard let fields = ProcFile.lines("/proc/self/statm")?.first?.split(separator: " "), fields.count >= 2,
            let pages = Int(fields[1])
        else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// The peak resident set size so far (`VmHWM` in `/proc/self/status`), or nil where it cannot be read.
    public static func peakResidentBytes() -> Int? {
        guard let line = ProcFile.lines("/proc/self/status")?.first(where: { $0.hasPrefix("VmHWM:") }) else {
            return nil
        }
        return Int(line.dropFirst(6).filter(\.isNumber)).map { $0 * 1024 }
    }

    /// Resets the kernel's peak mark (`VmHWM`) so that the next ``peakResidentBytes()`` is this phase's own
    /// peak (Linux 4.0+; does nothing elsewhere).
    public static func resetPeakResident() {
        guard let file = fopen("/proc/self/clear_refs", "w") else { return }
        fputs("5", file)
        fclose(file)
    }
}
