import Foundation
import PresenceTestSupport
import Testing

/// What an open change stream costs the replica in resident memory: the figure that says how many screens one
/// replica holds (Documentation/Deploying.md). Measured on the real `presence serve` process, with streams opened
/// by plain sockets from a process of their own (``HeldStreams``), so that the service's memory is the service's
/// alone.
///
/// A stream of one JID costs about 11 KiB in the release build and in the debug build the tests run, most of it
/// the connection (its pipeline, its last receive buffer, and the task Hummingbird keeps per connection, which for
/// a stream only waits for the close); the stream itself is written on the event loop and adds its subscription.
/// The budget holds that order of magnitude: the connection's task kept in the router's request loop (16 KiB in
/// all), a task writing each stream (about 8 KiB more) or a buffer kept per stream (a snapshot's 64 KiB write, a
/// read buffer grown and never given back) breaks it.
@Suite("What a change stream costs the replica", .realServers)
struct StreamMemoryTests {
    static let streams = 2_000
    static let budgetPerStream = 14 * 1024

    @Test(.enabled(if: !underThreadSanitizer, "resident memory under ThreadSanitizer is the sanitizer's"))
    func twoThousandStreamsCostLessThan14KiBEachOverAStreamlessBaseline() async throws {
        let server = try RunningServer([
            "--events-max-streams", "\(Self.streams + 100)", "--http-max-connections", "\(Self.streams + 200)",
        ])
        defer { _ = server.stop() }
        // Streams that open and close first: what the first streams set up once (the hub's observer, the event
        // loops' pools, the allocator's arenas) is in the baseline, not charged to the streams measured.
        try await HeldStreams(count: 200, watching: "w", port: server.httpPort).release()
        #expect(
            try await eventually(timeout: TestDeadline.condition) {
                try await Self.openStreams(port: server.httpPort) == 0
            })
        let baseline = try Self.residentBytes(of: server.process.processIdentifier)

        let open = try await HeldStreams(count: Self.streams, watching: "u", port: server.httpPort)
        defer { open.release() }
        #expect(try await Self.openStreams(port: server.httpPort) == Self.streams)
        let resident = try Self.residentBytes(of: server.process.processIdentifier)
        let perStream = (resident - baseline) / Self.streams
        print("\(Self.streams) change streams: \(perStream / 1024) KiB of resident memory each")
        #expect(
            perStream < Self.budgetPerStream,
            "\(perStream) bytes per stream (\(baseline) bytes before, \(resident) with \(Self.streams) streams)")
    }

    static func openStreams(port: Int) async throws -> Int? {
        let stats = try await TestHTTP.get(port: port, path: "/v1/stats")
        return (try JSONSerialization.jsonObject(with: Data(stats.body)) as? [String: Any])?["eventStreams"] as? Int
    }

    /// `VmRSS` of process `pid`, in bytes.
    static func residentBytes(of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kibibytes = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
        else { throw LoopbackTCP.Failure(description: "no VmRSS in /proc/\(pid)/status") }
        return kibibytes * 1024
    }
}
