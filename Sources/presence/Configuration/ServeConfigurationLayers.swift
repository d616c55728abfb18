import Configuration
import Foundation
import SystemPackage

/// Where `presence serve` takes each setting from, highest first: its flags, then `PRESENCE_*` environment
/// variables, then the `--config` file, then the flag's default. Read through swift-configuration
/// (`EnvironmentVariablesProvider`, `FileProvider<YAMLSnapshot>`); what the environment and the file set is put
/// on the command line before the flags are parsed, so each value is checked by the same flag parser, with the
/// same errors, as when it is typed.
struct ServeConfigurationLayers {
    /// Where a setting came from, for errors and `--print-config`.
    enum Source: Equatable, CustomStringConvertible {
        case commandLine
        case environment(String)
        case file(String, line: Int?)
        case defaultValue

        var description: String {
            switch self {
            case .commandLine: "command line"
            case .environment(let variable): "environment \(variable)"
            case .file(let path, let line): "\(path)\(line.map { ":\($0)" } ?? "")"
            case .defaultValue: "default"
            }
        }
    }

    /// One setting as in force: its values (several for a repeated flag; "true" for a flag that is on).
    struct Setting {
        let argument: ServeArgument
        let values: [String]
        let source: Source
    }

    /// The `serve` command line with what the environment and the file add, ready for the flag parser.
    let arguments: [String]
    /// Every setting from the environment and the file that is not overridden by a flag.
    let added: [Setting]
    /// The keys given as flags.
    let givenAsFlags: Set<String>

    /// - Parameter serveArguments: the arguments after `serve`.
    init(serveArguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment)
        async throws(ConfigurationError)
    {
        let given = Self.longNames(in: serveArguments)
        givenAsFlags = given
        for (variable, _) in environment where variable.hasPrefix("PRESENCE_") && variable != "PRESENCE_CONFIG" {
            guard ServeArgument.all.contains(where: { $0.environmentVariable == variable }) else {
                let key = variable.dropFirst("PRESENCE_".count).lowercased().replacingOccurrences(of: "_", with: "-")
                let hint = ServeArgument.suggestion(for: key).map { " (did you mean PRESENCE_\($0.uppercased().replacingOccurrences(of: "-", with: "_"))?)" } ?? ""
                throw .environment(variable, "'\(key)' is not a flag of presence serve\(hint)")
            }
        }
        let environmentReader = ConfigReader(
            provider: EnvironmentVariablesProvider(environmentVariables: environment).prefixKeys(with: "presence"))
        var fileReader: ConfigReader?
        var file: ConfigurationFile?
        if let path = Self.value(of: "config", in: serveArguments) ?? environment["PRESENCE_CONFIG"] {
            let checked = try ConfigurationFile(path: path)
            file = checked
            do {
                fileReader = ConfigReader(
                    provider: try await FileProvider<YAMLSnapshot>(filePath: FilePath(path)))
            } catch {
                throw .file(path, line: nil, "cannot be read: \(error)")
            }
        }
        var added: [Setting] = []
        for argument in ServeArgument.all where !given.contains(argument.name) {
            let key = ConfigKey([argument.name])
            if let values = try Self.read(argument, key: key, from: environmentReader, source: .environment(argument.environmentVariable)) {
                added.append(Setting(argument: argument, values: values, source: .environment(argument.environmentVariable)))
            } else if let fileReader, let file,
                let values = try Self.read(argument, key: key, from: fileReader, source: .file(file.path, line: file.lines[argument.name]))
            {
                added.append(Setting(argument: argument, values: values, source: .file(file.path, line: file.lines[argument.name])))
            }
        }
        self.added = added
        var arguments = serveArguments
        for setting in added {
            switch setting.argument.kind {
            case .flag:
                if setting.values == ["true"] { arguments.append("--\(setting.argument.name)") }
            case .option:
                for value in setting.values { arguments += ["--\(setting.argument.name)", value] }
            }
        }
        self.arguments = arguments
    }

    /// A flag's value in one layer: nil when the layer does not set it; `["true"]` or `[]` for a flag.
    private static func read(_ argument: ServeArgument, key: ConfigKey, from reader: ConfigReader, source: Source)
        throws(ConfigurationError) -> [String]?
    {
        switch argument.kind {
        case .flag:
            guard let text = reader.string(forKey: key) else { return nil }
            guard let on = reader.bool(forKey: key) else { throw error(source, "'\(argument.name)' is a flag: true or false, not '\(text)'") }
            return on ? ["true"] : []
        case .option where argument.isRepeating:
            if let list = reader.stringArray(forKey: key) { return list }
            return reader.string(forKey: key).map { [$0] }
        case .option:
            return reader.string(forKey: key).map { [$0] }
        }
    }

    private static func error(_ source: Source, _ message: String) -> ConfigurationError {
        switch source {
        case .environment(let variable): .environment(variable, message)
        case .file(let path, let line): .file(path, line: line, message)
        case .commandLine, .defaultValue: ConfigurationError(description: message)
        }
    }

    /// Where an added setting came from, when a flag parser's message names it (`--max-connections`).
    func source(namedIn message: String) -> Setting? {
        added.first { setting in
            message.contains("--\(setting.argument.name) ") || message.contains("--\(setting.argument.name)'")
                || message.contains("--\(setting.argument.name)\n") || message.hasSuffix("--\(setting.argument.name)")
        }
    }

    /// The long flag names on a command line (`--name` and `--name=value`).
    static func longNames(in arguments: [String]) -> Set<String> {
        Set(
            arguments.prefix { $0 != "--" }.compactMap { argument -> String? in
                guard argument.hasPrefix("--"), argument.count > 2 else { return nil }
                return String(argument.dropFirst(2).prefix { $0 != "=" })
            })
    }

    /// The value of `--name VALUE` or `--name=VALUE`, the last one given.
    static func value(of name: String, in arguments: [String]) -> String? {
        var found: String?
        var index = arguments.startIndex
        while index < arguments.endIndex, arguments[index] != "--" {
            let argument = arguments[index]
            if argument == "--\(name)", index + 1 < arguments.endIndex {
                found = arguments[index + 1]
                index += 1
            } else if argument.hasPrefix("--\(name)=") {
                found = String(argument.dropFirst(name.count + 3))
            }
            index += 1
        }
        return found
    }

    /// The effective configuration as a file would hold it, each key with where it came from; secrets are
    /// never in it, because every secret is a file of its own and only its path is a setting.
    func rendered(flags serveArguments: [String]) -> String {
        var lines = ["# presence serve: the configuration in force (flags > PRESENCE_* > --config file > defaults)"]
        let addedByName = Dictionary(added.map { ($0.argument.name, $0) }) { first, _ in first }
        for argument in ServeArgument.all {
            let values: [String]
            let source: Source
            if givenAsFlags.contains(argument.name) {
                source = .commandLine
                switch argument.kind {
                case .flag: values = ["true"]
                case .option: values = Self.values(of: argument.name, in: serveArguments)
                }
            } else if let setting = addedByName[argument.name] {
                source = setting.source
                values = argument.kind == .flag ? [setting.values == ["true"] ? "true" : "false"] : setting.values
            } else {
                source = .defaultValue
                switch argument.kind {
                case .flag: values = ["false"]
                case .option: values = argument.defaultValue.map { [$0] } ?? []
                }
            }
            let rendered: String
            if values.isEmpty {
                rendered = "null"
            } else if argument.kind == .flag {
                rendered = values[0]
            } else if argument.isRepeating {
                rendered = "[" + values.map(Self.quoted).joined(separator: ", ") + "]"
            } else {
                rendered = Self.quoted(values[0])
            }
            lines.append("\(argument.name): \(rendered)  # \(source)")
        }
        return lines.joined(separator: "\n")
    }

    private static func values(of name: String, in arguments: [String]) -> [String] {
        var found: [String] = []
        var index = arguments.startIndex
        while index < arguments.endIndex, arguments[index] != "--" {
            if arguments[index] == "--\(name)", index + 1 < arguments.endIndex {
                found.append(arguments[index + 1])
                index += 1
            } else if arguments[index].hasPrefix("--\(name)=") {
                found.append(String(arguments[index].dropFirst(name.count + 3)))
            }
            index += 1
        }
        return found
    }

    /// A YAML scalar: plain when it reads back as the same string, quoted otherwise.
    private static func quoted(_ value: String) -> String {
        let plain = value.allSatisfy { $0.isLetter || $0.isNumber || "-_./@:".contains($0) }
        if plain, !value.isEmpty, !["true", "false", "null", "yes", "no", "on", "off"].contains(value.lowercased()) {
            return value
        }
        return "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
