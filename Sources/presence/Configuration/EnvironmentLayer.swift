import Configuration

/// The `PRESENCE_*` environment variables, the second layer of settings. Checked whole before anything is read:
/// a value its setting cannot take, or a near miss of a key's variable (a typo), stops the start with the variable
/// named. Other `PRESENCE_*` variables share the environment with the service: one a platform set for a service of
/// its own (``PlatformVariable``) is ignored quietly, any other is ignored with a warning
/// (``notices``), in the log and in `--print-config`.
struct EnvironmentLayer {
    /// `PRESENCE_CONFIG`: the configuration file when `--config` is not given; no setting of its own.
    static let configFileVariable = "PRESENCE_CONFIG"

    /// A `PRESENCE_*` variable that is no setting, and why it is ignored.
    struct Notice: Hashable, Sendable {
        let variable: String
        /// Set by a platform (``PlatformVariable``): nothing to warn about.
        let isPlatform: Bool
        let reason: String

        var line: String { "\(variable) is not a setting of presence serve (\(reason)); ignored" }
    }

    let provider: KeyMappingProvider<EnvironmentVariablesProvider>
    /// `PRESENCE_CONFIG`'s value.
    let configFile: String?
    /// The `PRESENCE_*` variables that are no setting, in order of their names.
    let notices: [Notice]

    init(_ environment: [String: String], keys: [String: AnySettingKey]) throws(ConfigurationError) {
        let byVariable = Dictionary(uniqueKeysWithValues: keys.values.map { ($0.environmentVariable, $0) })
        var notices: [Notice] = []
        for (variable, value) in environment.sorted(by: { $0.key < $1.key })
        where variable.uppercased().hasPrefix("PRESENCE_") && variable != Self.configFileVariable {
            guard variable.hasPrefix("PRESENCE_") else {
                // `presence_count_limit`: a key's variable in the wrong case is a typo of it.
                guard byVariable[variable.uppercased()] != nil else { continue }
                throw .environment(variable, "variables are upper case (did you mean \(variable.uppercased())?)")
            }
            guard let key = byVariable[variable] else {
                if let platform = PlatformVariable.reason(variable, value: value) {
                    notices.append(Notice(variable: variable, isPlatform: true, reason: platform))
                    continue
                }
                let name = variable.dropFirst("PRESENCE_".count).lowercased().replacingOccurrences(of: "_", with: "-")
                if let near = SettingKeys.suggestion(for: name) {
                    let suggested = "PRESENCE_\(near.uppercased().replacingOccurrences(of: "-", with: "_"))"
                    throw .environment(variable, "'\(name)' is not a flag of presence serve (did you mean \(suggested)?)")
                }
                notices.append(Notice(variable: variable, isPlatform: false, reason: "no key is named '\(name)'"))
                continue
            }
            if let refusal = key.refusal(of: value) {
                throw .setting(key.name, at: .environment(variable), refusal)
            }
        }
        configFile = environment[Self.configFileVariable]
        self.notices = notices
        provider = EnvironmentVariablesProvider(environmentVariables: environment).prefixKeys(with: "presence")
    }
}
