import Foundation

/// A Debian program a test runs to completion (`prosodyctl`, `openssl`, `python3`), its output discarded.
package enum Tool {
    /// Runs `executable` with `arguments`; its exit status.
    @discardableResult
    package static func run(_ executable: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
