import Foundation
import Yams

/// A `presence serve --config FILE`: YAML, or JSON (which YAML reads as it is), a mapping of flag names to values.
///
/// ```yaml
/// storage: dictionary
/// xmpp-jid: watcher@corp.example
/// xmpp-password-file: /etc/presence/watcher   # secrets stay in files of their own
/// psi: true
/// ```
///
/// Checked before anything is read from it, so that a mistyped key or a value of the wrong kind is an error that
/// names the key and its line, never a setting silently ignored.
struct ConfigurationFile {
    let path: String
    /// The line of each key, for the errors found later (a value the flag itself refuses).
    let lines: [String: Int]

    /// Reads and checks `path`.
    init(path: String) throws(ConfigurationError) {
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
        guard let root else {
            lines = [:]
            return
        }
        guard case .mapping(let mapping) = root else {
            throw .file(path, line: root.mark?.line, "must be a mapping of flag names to values")
        }
        var lines: [String: Int] = [:]
        for (keyNode, value) in mapping {
            let line = keyNode.mark?.line
            guard case .scalar(let keyScalar) = keyNode else {
                throw .file(path, line: line, "a key must be a flag's name")
            }
            let key = keyScalar.string
            guard let argument = ServeArgument.byName[key] else {
                let hint = ServeArgument.suggestion(for: key).map { " (did you mean '\($0)'?)" } ?? ""
                let why =
                    ServeArgument.commandLineOnly.contains(key)
                    ? "is given on the command line only" : "is not a flag of presence serve\(hint)"
                throw .file(path, line: line, "unknown key '\(key)': it \(why)")
            }
            guard lines[key] == nil else { throw .file(path, line: line, "key '\(key)' is given twice") }
            lines[key] = line
            try Self.check(value, of: argument, in: path, line: value.mark?.line ?? line)
        }
        self.lines = lines
    }

    private static func check(_ value: Node, of argument: ServeArgument, in path: String, line: Int?)
        throws(ConfigurationError)
    {
        let key = argument.name
        switch (argument.kind, value) {
        case (.flag, .scalar(let scalar)):
            guard Bool.construct(from: scalar) != nil else {
                throw .file(path, line: line, "key '\(key)' is a flag: true or false, not '\(scalar.string)'")
            }
        case (.flag, _):
            throw .file(path, line: line, "key '\(key)' is a flag: true or false")
        case (.option, .scalar(let scalar)):
            if scalar.tag == Tag(.null) || scalar.string.isEmpty {
                throw .file(path, line: line, "key '\(key)' has no value")
            }
        case (.option, .sequence(let sequence)) where argument.isRepeating:
            for element in sequence {
                guard case .scalar = element else {
                    throw .file(path, line: element.mark?.line ?? line, "key '\(key)' takes a list of plain values")
                }
            }
        case (.option, .sequence):
            throw .file(path, line: line, "key '\(key)' takes one value, not a list")
        case (.option, _):
            throw .file(path, line: line, "key '\(key)' takes a plain value, not a mapping")
        }
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
