import Foundation

/// One run of `wrk` (Debian: `wrk`), the HTTP load generator the query benchmarks compare with: started, left to run
/// for its duration beside whatever else the benchmark does, then read.
public final class WrkRun {
    /// What `wrk --latency` reported.
    public struct Result: Sendable {
        public let requestsPerSecond: Double
        /// Milliseconds.
        public let p50: Double
        public let p99: Double
    }

    private let process: Process
    private let output: Pipe

    /// Starts `wrk -t<threads> -c<connections> -d<seconds>s --latency url`.
    public init(url: String, seconds: Int, threads: Int = 2, connections: Int = 50) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/wrk")
        process.arguments = ["-t\(threads)", "-c\(connections)", "-d\(seconds)s", "--latency", url]
        output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// Waits for the run's end and reads its report; nil when wrk failed or reported nothing.
    public func result() -> Result? {
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        var rate: Double?
        var p50: Double?
        var p99: Double?
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ")
            if line.hasPrefix("Requests/sec:"), let value = words.last.flatMap({ Double($0) }) { rate = value }
            if words.first == "50%" { p50 = words.last.flatMap(Self.milliseconds) }
            if words.first == "99%" { p99 = words.last.flatMap(Self.milliseconds) }
        }
        guard let rate, let p50, let p99 else { return nil }
        return Result(requestsPerSecond: rate, p50: p50, p99: p99)
    }

    /// wrk's durations: `812.00us`, `1.20ms`, `2.01s`.
    private static func milliseconds(_ text: Substring) -> Double? {
        for (suffix, scale) in [("us", 0.001), ("ms", 1.0), ("s", 1000.0)] where text.hasSuffix(suffix) {
            return Double(text.dropLast(suffix.count)).map { $0 * scale }
        }
        return nil
    }
}
