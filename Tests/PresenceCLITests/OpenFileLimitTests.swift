import Foundation
import PresenceTestSupport
import Testing

/// Every connection is a file descriptor: a service started from a shell whose soft open-file limit is 1,024
/// must still hold the connections its limits promise, and a hard limit too low for them is named at startup.
@Suite("presence serve and the open-file limit", .realServers)
struct OpenFileLimitTests {
    /// The service's limits in these tests: 1,500 HTTP connections and 100 feeders, plus 64 in reserve.
    static let arguments = ["--http-max-connections", "1500", "--max-connections", "100"]
    static let needed = 1_500 + 100 + 64

    /// This process's hard open-file limit, which the process holding the first test's streams inherits: they need
    /// more than a thousand.
    static let ownHardLimit: rlim_t = {
        var limit = rlimit()
        return getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 ? limit.rlim_max : 0
    }()

    @Test(.enabled(if: ownHardLimit >= 8_192, "this process may not open the thousands of connections it takes"))
    func aServiceStartedWithASoftLimitOf1024RaisesItAndHoldsMoreStreamsThanThat() async throws {
        let server = try await RunningServer.started(Self.arguments, openFileLimits: (soft: 1024, hard: nil))
        defer { _ = server.stop() }
        let limits = try Self.openFileLimits(of: server.process.processIdentifier)
        #expect(limits.soft == limits.hard, "raised to the hard limit: soft \(limits.soft), hard \(limits.hard)")
        #expect(server.log.contains("raised the open-file limit"), "\(server.log)")

        // More streams than 1,024 descriptors allow, each open once its snapshot has come.
        let streams = 1_100
        let open = try await HeldStreams(count: streams, watching: "u", port: server.httpPort)
        defer { open.release() }
        #expect(try await StreamMemoryTests.openStreams(port: server.httpPort) == streams)
    }

    @Test func aHardLimitBelowTheConnectionLimitsIsNamedAtStartupWithTheFigures() async throws {
        let server = try await RunningServer.started(Self.arguments, openFileLimits: (soft: 512, hard: 1_000))
        defer { _ = server.stop() }
        let limits = try Self.openFileLimits(of: server.process.processIdentifier)
        #expect(limits.soft == 1_000 && limits.hard == 1_000, "raised as far as the hard limit allows")
        let warning = server.log.split(separator: "\n").first { $0.contains("the open-file limit is below") }
        #expect(warning?.contains("limit=1000") == true && warning?.contains("needed=\(Self.needed)") == true)
        #expect(warning?.contains("--http-max-connections") == true, "the warning says what to change")
    }

    /// The soft and hard "Max open files" of process `pid`, from /proc.
    static func openFileLimits(of pid: Int32) throws -> (soft: Int, hard: Int) {
        let text = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Max open files") }) else {
            throw LoopbackTCP.Failure(description: "no open-file limit in /proc/\(pid)/limits")
        }
        let fields = line.dropFirst("Max open files".count).split(separator: " ")
        guard fields.count >= 2, let soft = Int(fields[0]), let hard = Int(fields[1]) else {
            throw LoopbackTCP.Failure(description: "unreadable: \(line)")
        }
        return (soft, hard)
    }
}
