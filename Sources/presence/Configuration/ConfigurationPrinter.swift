import Foundation

/// `presence serve --print-config`: every setting in force, in the configuration file's syntax, each with where it
/// comes from. Secrets are never in it: every secret is a file of its own and only its path is a setting.
struct ConfigurationPrinter {
    let settings: Settings
    let keys: [AnySettingKey]

    var text: String {
        var lines = ["# presence serve: the configuration in force (flags > PRESENCE_* > --config file > defaults)"]
        for key in keys {
            let rendered = settings.text(of: key).map { key.isSwitch ? $0 : Self.quoted($0) } ?? "null"
            lines.append("\(key.name): \(rendered)  # \(settings.source(of: key))")
        }
        for notice in settings.environmentNotices {
            lines.append("# \(notice.isPlatform ? "ignored" : "warning"): \(notice.line)")
        }
        return lines.joined(separator: "\n")
    }

    /// A YAML scalar: plain when it reads back as the same string, quoted otherwise.
    private static func quoted(_ value: String) -> String {
        let plain = value.allSatisfy { $0.isLetter || $0.isNumber || "-_./@:".contains($0) }
        if plain, !value.isEmpty, !["true", "false", "null", "yes", "no", "on", "off"].contains(value.lowercased()) {
            return value
        }
        return "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            + "\""
    }
}
