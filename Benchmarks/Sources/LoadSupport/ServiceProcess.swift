import Foundation
import Synchronization

/// `presence serve` from this repository's release build, in a process of its own as it is deployed, on free
/// loopback ports: the loads measure the service, not themselves.
public final class ServiceProcess: Sendable {
    public let feedPort: Int
    public let httpPort: Int
    private let process: Process
    /// The end of the service's log (the last 64 KiB), for a report when something goes wrong.
    private let logTail = LogTail()

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The release binary: `swift build -c release --product presence` at the repository's root, or the one
    /// `SERVICE_BINARY` names (an older build, measured in the same way for a before-and-after; not a `PRESENCE_*`
    /// name, which the service would take for its own configuration).
    public static let binary =
        ProcessInfo.processInfo.environment["SERVICE_BINARY"].map { URL(fileURLWithPath: $0) }
        ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".build/release/presence")

    /// Starts `presence serve --feed 127.0.0.1:0 --http 127.0.0.1:0 --log-level info` with `arguments` added, and
    /// waits until it says which ports it bound.
    public init(arguments: [String]) throws {
        guard FileManager.default.isExecutableFile(atPath: ServiceProcess.binary.path) else {
            throw Failure(
                description:
                    "build the service first: swift build -c release --product presence (\(ServiceProcess.binary.path))"
            )
        }
        process = Process()
        process.executableURL = ServiceProcess.binary
        process.arguments =
            ["serve", "--feed", "127.0.0.1:0", "--http", "127.0.0.1:0", "--log-level", "info"] + arguments
        let log = Pipe()
        process.standardError = log
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        var startupLog = ""
        var ports: (feed: Int, http: Int)?
        while ports == nil {
            let data = log.fileHandleForReading.availableData
            guard !data.isEmpty else { throw Failure(description: "the service exited: \(startupLog)") }
            startupLog += String(decoding: data, as: UTF8.self)
            if let line = startupLog.split(separator: "\n").first(where: { $0.contains("presence service running") }) {
                func port(_ key: String) -> Int? {
                    guard let range = line.range(of: key + "=127.0.0.1:") else { return nil }
                    return Int(line[range.upperBound...].prefix { $0.isNumber })
                }
                if let feed = port("feed"), let http = port("http") { ports = (feed, http) }
            }
        }
        (feedPort, httpPort) = ports!
        logTail.text.withLock { $0 = startupLog }
        // Keep draining the log so the service never blocks on it.
        let tail = logTail
        Thread.detachNewThread {
            while true {
                let data = log.fileHandleForReading.availableData
                if data.isEmpty { return }
                tail.text.withLock { text in
                    text += String(decoding: data, as: UTF8.self)
                    if text.utf8.count > 64 * 1024 { text = String(text.suffix(48 * 1024)) }
                }
            }
        }
    }

    public var processIdentifier: Int32 { process.processIdentifier }

    public var isRunning: Bool { process.isRunning }

    /// The last lines the service logged.
    public var recentLog: String { logTail.text.withLock { $0 } }

    /// The service's resident set (VmRSS), in bytes.
    public func residentBytes() -> Int { processResidentBytes(processIdentifier) }

    /// CPU seconds the service has used so far (utime + stime from /proc).
    public func cpuSeconds() -> Double { processCPUSeconds(processIdentifier) }

    /// Stops the service as an operator does (SIGTERM) and returns its exit status.
    @discardableResult
    public func stop() -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        process.terminate()
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// The end of a log, shared between the thread that drains it and whoever reports it.
private final class LogTail: Sendable {
    let text = Mutex<String>("")
}
