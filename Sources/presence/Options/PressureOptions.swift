import ArgumentParser
import PresenceStore

extension MemoryPressure: ExpressibleByArgument {}

/// Where memory pressure comes from: a script, the process's resident memory, or the kernel.
struct PressureOptions: ParsableArguments {
    @Option(name: .customLong("pressure-every"), help: "Deliver memory pressure after every N applied updates.")
    var pressureEvery: Int?

    @Option(name: .customLong("pressure-level"), help: "Level of scripted pressure: warning or critical.")
    var pressureLevel: MemoryPressure = .warning

    @Option(name: .customLong("memory-budget"), help: "Resident memory budget for the process, e.g. 512MiB: warning from 85%, critical at 100%.")
    var memoryBudget: ByteSize?

    @Flag(name: .customLong("psi"), help: "Also react to real kernel memory pressure (Linux PSI, cgroup v2 memory.events) where available.")
    var psi = false

    func validate() throws {
        if let pressureEvery, pressureEvery < 1 { throw ValidationError("--pressure-every must be at least 1") }
        if pressureLevel == .normal { throw ValidationError("--pressure-level must be warning or critical") }
        if let memoryBudget, memoryBudget.bytes < 1 { throw ValidationError("--memory-budget must be at least 1 byte") }
    }

    /// The sources, and notes about signals that were asked for but are not available here.
    func makeSources() -> (sources: [any MemoryPressureSource], notes: [String], kernel: KernelMemoryPressure?) {
        var sources: [any MemoryPressureSource] = []
        var notes: [String] = []
        if let pressureEvery { sources.append(ScriptedPressure(.every(updates: pressureEvery, level: pressureLevel))) }
        if let memoryBudget { sources.append(ResidentMemoryBudget(budgetBytes: memoryBudget.bytes)) }
        var kernel: KernelMemoryPressure?
        if psi {
            let started = PressureOptions.startKernelPressure()
            kernel = started.monitor
            if let monitor = started.monitor { sources.append(monitor) }
            notes += started.detection.unavailable.map { "psi: \($0)" }
        }
        return (sources, notes, kernel)
    }

    /// Starts the kernel signals (PSI, cgroup v2 events) that this machine offers; `detection` says which are
    /// live and why the others are not. Shared by the offline commands and `serve`.
    static func startKernelPressure() -> (monitor: KernelMemoryPressure?, detection: KernelMemoryPressure.Detection) {
        KernelMemoryPressure.start()
    }
}
