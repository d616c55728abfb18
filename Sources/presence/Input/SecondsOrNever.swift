import ArgumentParser

/// A period on the command line, in seconds (`30`, `2.5`), or `never` for a periodic task turned off.
struct SecondsOrNever: ExpressibleByArgument, Hashable, Sendable, CustomStringConvertible {
    /// Nil for `never`.
    let seconds: Double?

    init(seconds: Double?) { self.seconds = seconds }

    init?(argument: String) {
        if argument == "never" {
            seconds = nil
        } else if let value = Double(argument), value.isFinite {
            seconds = value
        } else {
            return nil
        }
    }

    var duration: Duration? { seconds.map { .milliseconds(Int64(($0 * 1000).rounded())) } }

    var description: String { seconds.flatMap(\.settingText) ?? "never" }

    static var defaultCompletionKind: CompletionKind { .default }
}
