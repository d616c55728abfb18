import ArgumentParser
import PresencePressure
import PresenceStore

extension MemoryPressure: ExpressibleByArgument {}

/// Real memory pressure's flags, for the offline commands and the service alike.
struct PressureOptions: ParsableArguments, SettingFlags {
    @Option(name: SettingKeys.memoryBudget.flag, help: SettingKeys.memoryBudget.help)
    var memoryBudget: ByteSize?

    @Flag(name: SettingKeys.psi.flag, inversion: .prefixedNo, help: SettingKeys.psi.help)
    var psi: Bool?

    func record(into flags: inout FlagLayer) {
        flags.record(SettingKeys.memoryBudget, memoryBudget)
        flags.record(SettingKeys.psi, psi)
    }
}

/// Real memory pressure in force: the process's resident memory and the kernel's signals.
struct RealPressure {
    /// The resident memory budget in bytes; nil without one.
    let memoryBudget: Int?
    let psi: Bool

    init(_ settings: Settings) throws {
        memoryBudget = try settings(SettingKeys.memoryBudget)?.bytes
        psi = try settings(SettingKeys.psi)
    }

    /// The sources; `kernel` must be stopped when done. `unavailable` names the kernel signals asked for that
    /// this machine does not offer, and why.
    func makeSources() -> (sources: [any MemoryPressureSource], unavailable: [String], kernel: KernelMemoryPressure?) {
        makeSources(memoryBudget: memoryBudget)
    }

    /// The sources, with `memoryBudget` in place of `--memory-budget` (a sweep varies it).
    func makeSources(
        memoryBudget: Int?
    ) -> (sources: [any MemoryPressureSource], unavailable: [String], kernel: KernelMemoryPressure?) {
        var sources: [any MemoryPressureSource] = []
        if let memoryBudget { sources.append(ResidentMemoryBudget(budgetBytes: memoryBudget)) }
        guard psi else { return (sources, [], nil) }
        let (kernel, detection) = KernelMemoryPressure.start()
        if let kernel { sources.append(kernel) }
        return (sources, detection.unavailable, kernel)
    }
}

/// Pressure at scripted points of a replay, so that storages are compared on equal terms.
struct ScriptedPressureOptions: ParsableArguments {
    @Option(name: .customLong("pressure-every"), help: "Deliver memory pressure after every N applied updates.")
    var pressureEvery: Int?

    @Option(name: .customLong("pressure-level"), help: "Level of scripted pressure: warning or critical.")
    var pressureLevel: MemoryPressure = .warning

    func validate() throws {
        if let pressureEvery, pressureEvery < 1 { throw ValidationError("--pressure-every must be at least 1") }
        if pressureLevel == .normal { throw ValidationError("--pressure-level must be warning or critical") }
    }

    var source: (any MemoryPressureSource)? {
        pressureEvery.map { ScriptedPressure(.every(updates: $0, level: pressureLevel)) }
    }
}
