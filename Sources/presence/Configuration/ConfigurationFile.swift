import Configuration
import Foundation
import Yams

/// A `presence serve --config FILE`, the third layer of settings: YAML, or JSON (which YAML reads as it is), a
/// mapping of setting names to values.
///
/// ```yaml
/// storage: dictionary
/// xmpp-jid: watcher@corp.example
/// xmpp-password-file: /etc/presence/watcher   # secrets stay in files of their own
/// psi: true
/// ```
///
/// Read once, with Yams, and checked whole against the table of keys before anything is used from it: a mistyped
/// key, a value of the wrong kind or one its setting cannot take is an error that names the key and its line,
/// never a setting silently ignored. What it holds is then one more provider in front of the defaults.
struct ConfigurationFile {
    let path: String
    /// The line of each key.
    let lines: [String: Int]
    let provider: InMemoryProvider

    /// Reads and checks `path` against `keys`.
    init(path: String, keys: [String: AnySettingKey]) throws(ConfigurationError) {
        self.path = path
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw .file(path, line: nil, "cannot be read: \((error as NSError).localizedDescription)")
        }
        let root: Node?
        do { root = try Yams.compose(yaml: text) } catch let error as YamlError {
            throw .file(path, line: Self.line(of: error), "is not valid YAML or JSON: \(error)")
        } catch {
            throw .file(path, line: nil, "is not valid YAML or JSON: \(error)")
        }
        var lines: [String: Int] = [:]
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        if let root {
            guard case .mapping(let mapping) = root else {
                throw .file(path, line: root.mark?.line, "must be a mapping of flag names to values")
            }
            for (keyNode, value) in mapping {
                let line = keyNode.mark?.line
                guard case .scalar(let keyScalar) = keyNode else {
                    throw .file(path, line: line, "a key must be a flag's name")
                }
                let name = keyScalar.string
                guard let key = keys[name] else {
                    let hint = SettingKeys.suggestion(for: name).map { " (did you mean '\($0)'?)" } ?? ""
                    let why =
                        SettingKeys.commandLineOnly.contains(name)
                        ? "is given on the command line only" : "is not a flag of presence serve\(hint)"
                    throw .file(path, line: line, "unknown key '\(name)': it \(why)")
                }
                guard lines[name] == nil else { throw .file(path, line: line, "key '\(name)' is given twice") }
                lines[name] = line
                let text = try Self.text(of: value, for: key, in: path, line: value.mark?.line ?? line)
                values[AbsoluteConfigKey([name])] = ConfigValue(.string(text), isSecret: false)
            }
        }
        self.lines = lines
        provider = InMemoryProvider(name: path, values: values)
    }

    /// The value as its setting reads it, or the error that names what is wrong with it.
    private static func text(
        of value: Node, for key: AnySettingKey, in path: String, line: Int?
    )
        throws(ConfigurationError) -> String
    {
        let name = key.name
        guard case .scalar(let scalar) = value else {
            if case .sequence = value { throw .file(path, line: line, "key '\(name)' takes one value, not a list") }
            throw .file(path, line: line, "key '\(name)' takes a plain value, not a mapping")
        }
        if key.isSwitch {
            guard let on = Bool.construct(from: scalar) else {
                throw .file(path, line: line, "key '\(name)' is a flag: true or false, not '\(scalar.string)'")
            }
            return on ? "true" : "false"
        }
        if scalar.tag == Tag(.null) || scalar.string.isEmpty {
            throw .file(path, line: line, "key '\(name)' has no value")
        }
        if let refusal = key.refusal(of: scalar.string) {
            throw .file(path, line: line, "key '\(name)': \(refusal)")
        }
        return scalar.string
    }

    private static func line(of error: YamlError) -> Int? {
        switch error {
        case .scanner(_, _, let mark, _), .parser(_, _, let mark, _), .composer(_, _, let mark, _):
            return mark.line
        default:
            return nil
        }
    }
}
