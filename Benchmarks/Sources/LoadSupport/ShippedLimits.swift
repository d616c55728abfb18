import Foundation

/// The client rate limits a load server runs with: none, the ones Debian's packages ship (read from the installed
/// `/etc/ejabberd/ejabberd.yml` and `/etc/prosody/prosody.cfg.lua`), or those with the watcher exempted as the
/// Deploying guide says.
public enum ShippedLimits: String, Sendable, CaseIterable {
    case none
    case stock
    case exempt

    /// The top-level section `key` of ejabberd's shipped configuration, as written there.
    static func ejabberdSection(_ key: String) throws -> String {
        let text = try String(contentsOfFile: "/etc/ejabberd/ejabberd.yml", encoding: .utf8)
        var lines: [Substring] = []
        for line in text.split(separator: "\n") {
            if line.hasPrefix("\(key):") { lines.append(line); continue }
            guard !lines.isEmpty else { continue }
            if let first = line.first, first != " ", first != "#" { break }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    /// ejabberd's `acl`, `shaper` and `shaper_rules` sections, and the c2s listener's shaper option.
    func ejabberd(watcher: String) throws -> (sections: String, listenerShaper: String) {
        switch self {
        case .none:
            return ("shaper_rules:\n  max_user_sessions: 10\n  c2s_shaper: none", "")
        case .stock:
            return (
                try ["acl", "shaper", "shaper_rules"].map(Self.ejabberdSection).joined(separator: "\n"),
                ", shaper: c2s_shaper"
            )
        case .exempt:
            let rules = try Self.ejabberdSection("shaper_rules").split(separator: "\n")
            var kept: [Substring] = []
            var skipping = false
            for line in rules {
                if line.hasPrefix("  c2s_shaper:") { skipping = true; continue }
                if skipping && line.hasPrefix("   ") { continue }
                skipping = false
                kept.append(line)
            }
            let sections = [
                try Self.ejabberdSection("acl"),
                "  presence_watcher:\n    user:\n      - \"\(watcher)\"",
                try Self.ejabberdSection("shaper"),
                kept.joined(separator: "\n"),
                "  c2s_shaper:\n    - none: admin\n    - none: presence_watcher\n    - normal",
            ]
            return (sections.joined(separator: "\n"), ", shaper: c2s_shaper")
        }
    }

    /// Prosody's lines: `mod_limits` with the shipped `limits` table, and the exemption.
    func prosody(watcher: String) throws -> (module: String, lines: String) {
        guard self != .none else { return ("", "") }
        let text = try String(contentsOfFile: "/etc/prosody/prosody.cfg.lua", encoding: .utf8)
        guard let start = text.range(of: "\nlimits = {"), let end = text[start.upperBound...].range(of: "\n}") else {
            throw LoadServerFailure.didNotStart
        }
        let table = String(text[start.lowerBound ..< end.upperBound])
        let exemption = self == .exempt ? "\nunlimited_jids = { \"\(watcher)\" }" : ""
        return ("; \"limits\"", table + exemption)
    }
}
