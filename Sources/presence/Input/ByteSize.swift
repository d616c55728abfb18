import ArgumentParser
import Foundation

/// A size on the command line: `1048576`, `512KiB`, `64MiB`, `2GiB` (`K`, `M`, `G` are powers of 1024 too;
/// `KB`, `MB`, `GB` are powers of 1000).
struct ByteSize: ExpressibleByArgument, Hashable, Sendable, CustomStringConvertible {
    let bytes: Int

    init(bytes: Int) { self.bytes = bytes }

    init?(argument: String) {
        let text = argument.trimmingCharacters(in: .whitespaces)
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        guard let value = Int(digits) else { return nil }
        let units: [String: Int] = [
            "": 1, "B": 1, "K": 1 << 10, "KIB": 1 << 10, "M": 1 << 20, "MIB": 1 << 20, "G": 1 << 30, "GIB": 1 << 30,
            "KB": 1000, "MB": 1_000_000, "GB": 1_000_000_000,
        ]
        let unit = text.dropFirst(digits.count).trimmingCharacters(in: .whitespaces).uppercased()
        guard let multiplier = units[unit] else { return nil }
        let (product, overflow) = value.multipliedReportingOverflow(by: multiplier)
        guard !overflow else { return nil }
        bytes = product
    }

    var description: String { "\(bytes)" }
}
