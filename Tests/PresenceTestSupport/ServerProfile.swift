import Foundation

/// The client limits a test server runs with: none (the lab's settings), or the ones Debian's packages ship,
/// read from the installed configuration files, with or without the Deploying guide's exemption for the watcher.
package enum ServerProfile: Sendable, Hashable, CustomStringConvertible {
    /// No client rate limit.
    case unshaped
    /// The shipped limits: ejabberd's `shaper` and `shaper_rules` (and the `acl` they name) with the listener's
    /// `shaper: c2s_shaper`, Prosody's `mod_limits` with its `limits` table, as `/etc/ejabberd/ejabberd.yml` and
    /// `/etc/prosody/prosody.cfg.lua` have them.
    case stock
    /// The shipped limits, with the account `watcher` (a localpart) exempted as the Deploying guide says.
    case stockExempting(watcher: String)

    package var description: String {
        switch self {
        case .unshaped: "unshaped"
        case .stock: "stock"
        case .stockExempting(let watcher): "stock, \(watcher) exempted"
        }
    }

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    static let ejabberdFile = URL(fileURLWithPath: "/etc/ejabberd/ejabberd.yml")
    static let prosodyFile = URL(fileURLWithPath: "/etc/prosody/prosody.cfg.lua")

    /// The top-level YAML section `key` of ejabberd's shipped configuration, as written there (its first line
    /// and every indented line after it).
    static func ejabberdSection(_ key: String) throws -> String {
        let text = try String(contentsOf: ejabberdFile, encoding: .utf8)
        var lines: [Substring] = []
        var inside = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("\(key):") {
                inside = true
            } else if inside, let first = line.first, first != " ", first != "#" {
                break
            }
            if inside { lines.append(line) }
        }
        guard !lines.isEmpty else { throw Failure(description: "\(ejabberdFile.path) has no \(key): section") }
        return lines.joined(separator: "\n")
    }

    /// Whether the shipped ejabberd c2s listener applies `shaper: c2s_shaper`.
    static func ejabberdListenerShaper() throws -> String? {
        let listen = try ejabberdSection("listen")
        let line = listen.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("shaper:") }
        return line.map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// The `limits = { ... }` table of Prosody's shipped configuration, as written there, when its
    /// `modules_enabled` loads `limits`; nil otherwise.
    static func prosodyLimits() throws -> String? {
        let text = try String(contentsOf: prosodyFile, encoding: .utf8)
        let code = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.range(of: "--").map { line[..<$0.lowerBound] } ?? line
        }.joined(separator: "\n")
        guard let modules = code.range(of: "modules_enabled"),
            let end = code[modules.upperBound...].range(of: "}"),
            code[modules.upperBound ..< end.lowerBound].contains("\"limits\"")
        else { return nil }
        guard let start = code.range(of: "limits = {") else {
            throw Failure(description: "\(prosodyFile.path) loads mod_limits but has no limits table")
        }
        var depth = 0
        var index = start.lowerBound
        while index < code.endIndex {
            if code[index] == "{" { depth += 1 }
            if code[index] == "}" {
                depth -= 1
                if depth == 0 { return String(code[start.lowerBound ... index]) }
            }
            index = code.index(after: index)
        }
        throw Failure(description: "\(prosodyFile.path): the limits table does not end")
    }
}
