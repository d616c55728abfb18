import Configuration

/// The flags given on the command line, the first layer of settings: swift-configuration's "parsed options into an
/// `InMemoryProvider` in front of the environment and the file". A flag that is not given is absent here, so a
/// lower layer or the default decides it.
struct FlagLayer {
    private(set) var values: [AbsoluteConfigKey: ConfigValue] = [:]

    /// Records `key` when its flag was given (`value` non-nil).
    mutating func record<Value>(_ key: SettingKey<Value>, _ value: Value?) {
        guard let text = value?.settingText else { return }
        values[AbsoluteConfigKey([key.name])] = ConfigValue(.string(text), isSecret: false)
    }

    var provider: InMemoryProvider { InMemoryProvider(name: "command line", values: values) }
}

/// Flags that are settings: each group records the ones given into the first layer.
protocol SettingFlags {
    func record(into flags: inout FlagLayer)
}
