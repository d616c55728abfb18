import ArgumentParser

/// Everything a replay into a storage is run with: limits, scripted and real pressure, stream limits.
struct ReplayOptions: ParsableArguments {
    @OptionGroup var storage: StorageOptions
    @OptionGroup var scripted: ScriptedPressureOptions
    @OptionGroup var pressure: PressureOptions
    @OptionGroup var stream: StreamOptions
}
