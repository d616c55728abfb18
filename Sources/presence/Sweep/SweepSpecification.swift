import ArgumentParser
import Foundation

/// `--sweep count-limit=100..20000`: which limit `compare` varies, and over what range.
struct SweepSpecification: ExpressibleByArgument, CustomStringConvertible {
    enum Parameter: String, CaseIterable {
        /// The evicting storages' count limit (users).
        case countLimit = "count-limit"
        /// The evicting storages' cost limit (estimated bytes).
        case costLimit = "cost-limit"
        /// The process's resident memory budget, which drives memory pressure.
        case memoryBudget = "memory-budget"

        /// Whether values are sizes in bytes (written and read as `64MiB`).
        var isBytes: Bool { self != .countLimit }
    }

    let parameter: Parameter
    let lower: Int
    let upper: Int

    init?(argument: String) {
        guard let equals = argument.firstIndex(of: "="),
            let parameter = Parameter(rawValue: String(argument[..<equals]))
        else { return nil }
        let range = argument[argument.index(after: equals)...].components(separatedBy: "..")
        guard range.count == 2 else { return nil }
        func value(_ text: String) -> Int? {
            parameter.isBytes ? ByteSize(argument: text)?.bytes : Int(text.trimmingCharacters(in: .whitespaces))
        }
        guard let lower = value(range[0]), let upper = value(range[1]), lower >= 1, upper > lower else { return nil }
        self.parameter = parameter
        self.lower = lower
        self.upper = upper
    }

    static var defaultValueDescription: String { "count-limit=100..20000" }

    /// `steps` values from `lower` to `upper`, evenly spaced on a log scale, rounded and without repeats.
    func values(steps: Int) -> [Int] {
        guard steps > 1 else { return [upper] }
        let ratio = log(Double(upper) / Double(lower))
        var values: [Int] = []
        for index in 0 ..< steps {
            let value = Int((Double(lower) * exp(ratio * Double(index) / Double(steps - 1))).rounded())
            if values.last != value { values.append(min(max(value, lower), upper)) }
        }
        return values
    }

    var description: String { "\(parameter.rawValue)=\(lower)..\(upper)" }
}
