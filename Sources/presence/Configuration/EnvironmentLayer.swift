import Configuration

/// The `PRESENCE_*` environment variables, the second layer of settings. Checked whole before anything is read:
/// a variable that names no setting, or a value its setting cannot take, stops the start with the variable named.
struct EnvironmentLayer {
    /// `PRESENCE_CONFIG`: the configuration file when `--config` is not given; no setting of its own.
    static let configFileVariable = "PRESENCE_CONFIG"

    let provider: KeyMappingProvider<EnvironmentVariablesProvider>
    /// `PRESENCE_CONFIG`'s value.
    let configFile: String?

    init(_ environment: [String: String], keys: [String: AnySettingKey]) throws(ConfigurationError) {
        let byVariable = Dictionary(uniqueKeysWithValues: keys.values.map { ($0.environmentVariable, $0) })
        for (variable, value) in environment.sorted(by: { $0.key < $1.key })
        where variable.hasPrefix("PRESENCE_") && variable != Self.configFileVariable {
            guard let key = byVariable[variable] else {
                let name = variable.dropFirst("PRESENCE_".count).lowercased().replacingOccurrences(of: "_", with: "-")
                let hint =
                    SettingKeys.suggestion(for: name).map {
                        " (did you mean PRESENCE_\($0.uppercased().replacingOccurrences(of: "-", with: "_"))?)"
                    } ?? ""
                throw .environment(variable, "'\(name)' is not a flag of presence serve\(hint)")
            }
            if let refusal = key.refusal(of: value) {
                throw .setting(key.name, at: .environment(variable), refusal)
            }
        }
        configFile = environment[Self.configFileVariable]
        provider = EnvironmentVariablesProvider(environmentVariables: environment).prefixKeys(with: "presence")
    }
}
