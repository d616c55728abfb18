/// A configuration that cannot be used: each names where the bad value is (the file and its line, or the
/// environment variable) and the key. The command exits 64 (usage), as for a bad flag.
struct ConfigurationError: Error, CustomStringConvertible {
    let description: String

    /// In the file, at `line`.
    static func file(_ path: String, line: Int?, _ message: String) -> ConfigurationError {
        ConfigurationError(description: "\(path)\(line.map { ":\($0)" } ?? ""): \(message)")
    }

    /// In the environment variable `variable`.
    static func environment(_ variable: String, _ message: String) -> ConfigurationError {
        ConfigurationError(description: "environment variable \(variable): \(message)")
    }

    /// The value of setting `key` as `source` gives it.
    static func setting(_ key: String, at source: SettingSource, _ message: String) -> ConfigurationError {
        ConfigurationError(description: "\(source): key '\(key)': \(message)")
    }
}
