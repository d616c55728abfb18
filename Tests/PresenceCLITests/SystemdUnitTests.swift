import Foundation
import PresenceTestSupport
import Testing

/// The shipped systemd unit (`Samples/deploy/presence.service`) and the readiness protocol it relies on.
@Suite("presence serve under systemd: the shipped unit and Type=notify", .realServers)
struct SystemdUnitTests {
    static let unit = CLI.repository.appendingPathComponent("Samples/deploy/presence.service")

    @Test func theShippedUnitPassesSystemdAnalyzeVerify() throws {
        let analyze = "/usr/bin/systemd-analyze"
        guard FileManager.default.isExecutableFile(atPath: analyze) else {
            Issue.record("systemd-analyze is not installed (Debian package systemd)")
            return
        }
        // verify checks that ExecStart's program exists: point it at the binary under test.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("presence-unit-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let text = try String(contentsOf: Self.unit, encoding: .utf8)
            .replacingOccurrences(of: "/usr/local/bin/presence", with: CLI.binary.path)
        let copy = directory.appendingPathComponent("presence.service")
        try text.write(to: copy, atomically: true, encoding: .utf8)
        let output = Pipe()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: analyze)
        process.arguments = ["verify", copy.path]
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let drained = PipeDrain(output)
        #expect(CLI.waitForExit(process, timeout: TestDeadline.processExit))
        let report = drained.finish()
        #expect(process.terminationStatus == 0 && !report.contains("presence.service:"), "\(report)")
    }

    @Test func everyFlagTheUnitPassesIsOneTheServiceHas() throws {
        let text = try String(contentsOf: Self.unit, encoding: .utf8)
        let execStart = try #require(text.range(of: "ExecStart="))
        var lines: [Substring] = []
        for line in text[execStart.upperBound...].split(separator: "\n") {
            lines.append(line)
            if !line.hasSuffix("\\") { break }
        }
        let command = lines.joined(separator: " ")
        let flags = command.split(separator: " ").filter { $0.hasPrefix("--") }
        #expect(flags.count >= 10, "\(command)")
        let help = try CLI.run(["serve", "--help"])
        for flag in flags {
            // An on/off flag is listed with its opposite: `--allow-remote/--no-allow-remote`.
            #expect(
                help.stdout.contains("\(flag) ") || help.stdout.contains("\(flag)\n") || help.stdout.contains("\(flag)/"),
                "presence serve has \(flag)")
        }
    }

    @Test func systemdIsToldReadyOnceThePortsAreBoundAndStoppingWhenTheShutdownBegins() async throws {
        // The service manager's end: a datagram socket at NOTIFY_SOCKET.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString.prefix(8))").path
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        #expect(descriptor >= 0)
        defer {
            close(descriptor)
            unlink(path)
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (index, byte) in path.utf8.enumerated() { bytes[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(bound == 0)
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        func receive() -> String? {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(descriptor, &buffer, buffer.count, 0)
            return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : nil
        }

        let server = try RunningServer([], environment: ["NOTIFY_SOCKET": path])
        var messages: [String] = []
        while let message = receive() {
            messages.append(message)
            if message.contains("READY=1") { break }
        }
        let ready = try #require(messages.first { $0.contains("READY=1") }, "\(messages)")
        #expect(ready.contains("STATUS=ready: "), "readiness, as /readyz says it: \(ready)")
        #expect(ready.contains("(feed 127.0.0.1:\(server.feedPort), http 127.0.0.1:\(server.httpPort))"))
        // Once READY=1 has come, the ports answer.
        #expect(try await TestHTTP.get(port: server.httpPort, path: "/healthz").status == 200)

        #expect(server.stop() == 0)
        var stopping: String?
        while stopping == nil, let message = receive() {
            if message.contains("STOPPING=1") { stopping = message }
        }
        #expect(stopping != nil, "systemd is told the service is stopping")
    }
}
