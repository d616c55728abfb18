import Foundation
import PresenceWire

/// Numbers for people: thousands separators, binary byte units, percentages.
enum Format {
    static func count(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var grouped = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { grouped.append(",") }
            grouped.append(digit)
        }
        return value < 0 ? "-" + grouped : grouped
    }

    static func bytes(_ value: Int) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var amount = Double(value)
        var unit = 0
        while amount >= 1024 && unit < units.count - 1 {
            amount /= 1024
            unit += 1
        }
        return unit == 0 ? "\(value) B" : String(format: "%.1f %@", amount, units[unit])
    }

    static func percent(_ fraction: Double) -> String { String(format: "%.1f%%", fraction * 100) }

    static func seconds(_ value: Double) -> String { String(format: "%.3f s", value) }

    /// `line 3, column 7` (and the byte offset when asked), or `an unknown position`.
    static func position(_ error: ErrorReport, withByteOffset: Bool = false) -> String {
        guard let line = error.line, let column = error.column else { return "an unknown position" }
        let byte = withByteOffset ? error.byteOffset.map { " (byte \($0))" } ?? "" : ""
        return "line \(line), column \(column)\(byte)"
    }
}

/// A table with aligned columns: the first column left-aligned, the others right-aligned.
struct TextTable {
    var header: [String]?
    var rows: [[String]] = []
    /// Right-align the columns after the first (numbers); false left-aligns them (key-value lists).
    var alignValuesRight = true

    func render() -> String {
        let all = (header.map { [$0] } ?? []) + rows
        let columns = all.map(\.count).max() ?? 0
        var widths = [Int](repeating: 0, count: columns)
        for row in all { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
        func line(_ row: [String]) -> String {
            row.enumerated().map { index, cell in
                let padding = String(repeating: " ", count: widths[index] - cell.count)
                return index == 0 || !alignValuesRight ? cell + padding : padding + cell
            }.joined(separator: "  ")
        }
        var lines: [String] = []
        if let header {
            lines.append(line(header))
            lines.append(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  "))
        }
        lines += rows.map(line)
        return lines.map { $0.replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression) }.joined(
            separator: "\n")
    }
}
