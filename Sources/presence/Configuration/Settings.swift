import Configuration

/// The settings a command runs with: one `ConfigReader` over its layers, highest first (the flags given, then
/// the `PRESENCE_*` variables, then the `--config` file), and each key's default below them. Every value is read
/// with its key's type, so a setting means the same from any layer.
struct Settings {
    /// One layer: its provider, and where a value it holds comes from.
    private struct Layer {
        let provider: any ConfigProvider
        let source: (AnySettingKey) -> SettingSource
    }

    private let layers: [Layer]
    private let reader: ConfigReader
    /// The `PRESENCE_*` variables that are no setting, ignored (``EnvironmentLayer/notices``).
    let environmentNotices: [EnvironmentLayer.Notice]

    /// The flags alone (the offline commands).
    init(flags: FlagLayer) {
        self.init(layers: [Layer(provider: flags.provider) { _ in .commandLine }])
    }

    /// Flags over the environment over the file (`presence serve`).
    init(flags: FlagLayer, environment: EnvironmentLayer, file: ConfigurationFile?) {
        var layers = [
            Layer(provider: flags.provider) { _ in .commandLine },
            Layer(provider: environment.provider) { .environment($0.environmentVariable) },
        ]
        if let file {
            layers.append(Layer(provider: file.provider) { .file(file.path, line: file.lines[$0.name]) })
        }
        self.init(layers: layers, environmentNotices: environment.notices)
    }

    private init(layers: [Layer], environmentNotices: [EnvironmentLayer.Notice] = []) {
        self.layers = layers
        self.environmentNotices = environmentNotices
        reader = ConfigReader(providers: layers.map(\.provider))
    }

    /// The value of `key` in force: the highest layer's, else the default; refused, with where it was set, when it
    /// is out of the key's bounds.
    func callAsFunction<Value>(_ key: SettingKey<Value>) throws(ConfigurationError) -> Value {
        guard let text = reader.string(forKey: key.configKey) else { return key.defaultValue }
        guard let value = Value(settingText: text) else {
            // Each layer is checked when it is read; a value that still does not read is named where it is.
            throw .setting(key.name, at: source(of: key.erased), key.erased.refusal(of: text) ?? "")
        }
        if let bounds = key.bounds, !bounds.admits(value) {
            let source = source(of: key.erased)
            guard source != .commandLine else {
                throw ConfigurationError(description: "--\(key.name) must be \(bounds.requirement)")
            }
            throw .setting(key.name, at: source, "must be \(bounds.requirement), not \(text)")
        }
        return value
    }

    /// Whether some layer sets `key` (rather than its default deciding).
    func isSet<Value>(_ key: SettingKey<Value>) -> Bool {
        source(of: key.erased) != .defaultValue
    }

    /// The text of `key` in force (nil for an optional setting no layer sets), for `--print-config`.
    func text(of key: AnySettingKey) -> String? {
        reader.string(forKey: key.configKey) ?? key.defaultText
    }

    /// The layer `key`'s value comes from: the first that holds one.
    func source(of key: AnySettingKey) -> SettingSource {
        for layer in layers {
            if let found = try? layer.provider.value(forKey: AbsoluteConfigKey([key.name]), type: .string),
                found.value != nil
            {
                return layer.source(key)
            }
        }
        return .defaultValue
    }
}
