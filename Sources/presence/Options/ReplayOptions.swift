import ArgumentParser

/// Everything a replay into a storage is run with: limits, scripted and real pressure, stream limits.
struct ReplayOptions: ParsableArguments {
    @OptionGroup var storage: StorageOptions
    @OptionGroup var scripted: ScriptedPressureOptions
    @OptionGroup var pressure: PressureOptions
    @OptionGroup var stream: StreamOptions

    func validate() throws {
        _ = try resolved()
    }

    /// The settings in force: an offline command reads its flags alone.
    func resolved() throws -> ReplaySettings {
        var flags = FlagLayer()
        storage.record(into: &flags)
        pressure.record(into: &flags)
        stream.record(into: &flags)
        let settings = Settings(flags: flags)
        do {
            return ReplaySettings(
                storage: try StorageLimits(settings), scripted: scripted, pressure: try RealPressure(settings),
                stream: try StreamLimits(settings))
        } catch let error as ConfigurationError {
            throw ValidationError(error.description)
        }
    }
}

/// What a replay runs with, resolved from ``ReplayOptions``.
struct ReplaySettings {
    let storage: StorageLimits
    let scripted: ScriptedPressureOptions
    let pressure: RealPressure
    let stream: StreamLimits
}
