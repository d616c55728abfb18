import Foundation
import PresenceStore
import PresenceTestSupport

/// What a run of the `presence` binary printed, and how it ended.
struct CLIResult {
    let status: Int32
    let stdout: String
    let stderr: String
    /// The run did not end within its time limit and was killed.
    let timedOut: Bool

    var json: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(stdout.utf8))) as? [String: Any]
    }
}

/// Reads a pipe to its end on a thread of its own, so that a child filling one pipe never blocks on the other.
final class PipeDrain: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let data = Locked(Data())

    init(_ pipe: Pipe) {
        let handle = pipe.fileHandleForReading
        Thread { [data, done] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                data.withLock { $0.append(chunk) }
            }
            done.signal()
        }.start()
    }

    /// What was read so far.
    var text: String { String(decoding: data.withLock { $0 }, as: UTF8.self) }

    /// Everything, once the writer closed the pipe. Called again, it answers at once.
    func finish() -> String {
        done.wait()
        done.signal()
        return text
    }

    /// Whether what was read contains `text` within `deadline`, suspending rather than blocking a pool thread.
    func contains(_ text: String, within deadline: Duration = TestDeadline.condition) async -> Bool {
        (try? await eventually(timeout: deadline) { self.text.contains(text) }) ?? false
    }

    /// Everything, once the writer closed the pipe or `deadline` passed (a grandchild may hold the pipe open).
    @discardableResult
    func finish(within deadline: Duration) -> String {
        if done.wait(timeout: .now() + deadline.inSeconds) == .success { done.signal() }
        return text
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

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func sample(_ name: String) -> String { repository.appendingPathComponent("Samples/\(name)").path }

    /// Runs `presence` with `arguments`; `stdinChunks` are written to its standard input with `delay` between
    /// them, and standard input is closed afterwards unless `closeInput` is false (then the process must end on
    /// its own while the pipe is still open). A run still going after `timeout` is killed and marked timed out.
    static func run(
        _ arguments: [String], stdinChunks: [Data]? = nil, delay: TimeInterval = 0, closeInput: Bool = true,
        timeout: Duration = TestDeadline.processExit, environment: [String: String] = [:]
    ) throws -> CLIResult {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let input = Pipe()
        process.standardInput = stdinChunks != nil ? input : FileHandle.nullDevice
        try process.run()
        let stdout = PipeDrain(output)
        let stderr = PipeDrain(errors)
        if let stdinChunks {
            for chunk in stdinChunks {
                try input.fileHandleForWriting.write(contentsOf: chunk)
                if delay > 0 { Thread.sleep(forTimeInterval: delay) }
            }
            if closeInput { try input.fileHandleForWriting.close() }
        }
        let timedOut = !waitForExit(process, timeout: timeout)
        if stdinChunks != nil && !closeInput { try? input.fileHandleForWriting.close() }
        return CLIResult(
            status: process.terminationStatus, stdout: stdout.finish(), stderr: stderr.finish(), timedOut: timedOut)
    }

    /// ``run(_:stdinChunks:delay:closeInput:timeout:)`` from a test that is async: the run is waited for on a
    /// thread of its own, not on one of the cooperative pool's (see `onAThreadOfItsOwn`).
    static func run(
        _ arguments: [String], stdinChunks: [Data]? = nil, delay: TimeInterval = 0, closeInput: Bool = true,
        timeout: Duration = TestDeadline.processExit, environment: [String: String] = [:]
    ) async throws -> CLIResult {
        try await onAThreadOfItsOwn {
            try run(
                arguments, stdinChunks: stdinChunks, delay: delay, closeInput: closeInput, timeout: timeout,
                environment: environment)
        }
    }

    /// Waits for `process` to end; kills it and answers false when it is still running after `timeout`.
    static func waitForExit(_ process: Process, timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.01) }
        let ended = !process.isRunning
        if !ended { kill(process.processIdentifier, SIGKILL) }
        // Also once it has ended: Foundation's run-loop source keeps the Process, its pipes and their buffers
        // alive until `waitUntilExit` lets it go (LeakSanitizer).
        process.waitUntilExit()
        return ended
    }
}
