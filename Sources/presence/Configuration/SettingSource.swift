/// Where a setting in force comes from, for errors and `--print-config`.
enum SettingSource: Equatable, Sendable, CustomStringConvertible {
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
