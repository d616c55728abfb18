import ArgumentParser
import Foundation

/// One of `presence serve`'s flags as a configuration key: its long name is the key in a configuration file and,
/// upper-cased with `PRESENCE_` before it, the environment variable (`--xmpp-jid`: `xmpp-jid`, `PRESENCE_XMPP_JID`).
///
/// The list is read from the command's own definition (swift-argument-parser's help dump), so every flag has a
/// key and a new flag gets one without a table to keep in step.
struct ServeArgument: Hashable, Sendable {
    enum Kind: Hashable, Sendable {
        /// A flag with no value: `true` or `false` in a file or the environment.
        case flag
        /// An option with one value, or a list of values when `isRepeating`.
        case option
    }

    let name: String
    let kind: Kind
    let isRepeating: Bool
    /// The default as the help shows it; nil when the option has none (it is off unless given).
    let defaultValue: String?

    /// The environment variable for this key.
    var environmentVariable: String {
        "PRESENCE_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    /// Keys that steer the command line itself and have no place in a configuration.
    static let commandLineOnly: Set<String> = ["help", "version", "config", "print-config"]

    /// Every configurable flag of `presence serve`, in the order of its help.
    static let all: [ServeArgument] = {
        struct Dump: Decodable {
            struct Command: Decodable { let arguments: [Argument]? }
            struct Argument: Decodable {
                struct Name: Decodable {
                    let kind: String
                    let name: String
                }
                let kind: String
                let names: [Name]?
                let isRepeating: Bool
                let defaultValue: String?
            }
            let command: Command
        }
        guard let dump = try? JSONDecoder().decode(Dump.self, from: Data(ServeCommand._dumpHelp().utf8)) else {
            return []
        }
        return (dump.command.arguments ?? []).compactMap { argument in
            guard let name = argument.names?.first(where: { $0.kind == "long" })?.name,
                !commandLineOnly.contains(name), argument.kind == "option" || argument.kind == "flag"
            else { return nil }
            return ServeArgument(
                name: name, kind: argument.kind == "flag" ? .flag : .option, isRepeating: argument.isRepeating,
                defaultValue: argument.defaultValue)
        }
    }()

    static let byName: [String: ServeArgument] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })

    /// The known key nearest to `unknown` by edit distance, when one is close enough to be a likely typo.
    static func suggestion(for unknown: String) -> String? {
        let scored = all.map { ($0.name, editDistance($0.name, unknown)) }.min { $0.1 < $1.1 }
        guard let (name, distance) = scored, distance <= max(2, unknown.count / 4) else { return nil }
        return name
    }

    private static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8)
        let b = Array(b.utf8)
        var previous = Array(0 ... b.count)
        for i in 1 ... max(a.count, 1) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in stride(from: 1, through: b.count, by: 1) {
                current[j] = Swift.min(
                    previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return a.isEmpty ? b.count : previous[b.count]
    }
}
