import Foundation

/// Runs the built `presence` binary and captures what it prints.
struct CLIResult {
    let status: Int32
    let stdout: String
    let stderr: String

    var json: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(stdout.utf8))) as? [String: Any]
    }
}

enum CLI {
    /// The `presence` binary next to the test bundle in the build folder.
    static var binary: URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        // On Linux the tests run from .build/<triple>/<config>/<Package>PackageTests.xctest.
        if directory.lastPathComponent.hasSuffix(".xctest") { directory.deleteLastPathComponent() }
        return directory.appendingPathComponent("presence")
    }

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func sample(_ name: String) -> String { repository.appendingPathComponent("Samples/\(name)").path }

    /// Runs `presence` with `arguments`; `stdinChunks` are written to its standard input with `delay` between them.
    static func run(_ arguments: [String], stdinChunks: [Data]? = nil, delay: TimeInterval = 0) throws -> CLIResult {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let input = Pipe()
        if stdinChunks != nil { process.standardInput = input } else { process.standardInput = FileHandle.nullDevice }
        try process.run()
        if let stdinChunks {
            for chunk in stdinChunks {
                input.fileHandleForWriting.write(chunk)
                if delay > 0 { Thread.sleep(forTimeInterval: delay) }
            }
            try input.fileHandleForWriting.close()
        }
        let outData = output.fileHandleForReading.readDataToEndOfFile()
        let errData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CLIResult(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                         stderr: String(decoding: errData, as: UTF8.self))
    }
}
