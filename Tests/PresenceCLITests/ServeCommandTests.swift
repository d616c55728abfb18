import Foundation
import PresenceTestSupport
import Testing

/// `presence serve` on ports the kernel picks (port 0), read back from its start-up log line: no port is ever
/// chosen by the test and raced for.
// @unchecked: every stored property is set once in `init` and never reassigned; `Process` and `PipeDrain` are safe
// to use from any thread (the drain keeps its text under a lock of its own). It crosses to a thread of its own
// only so that an async test does not hold one of the cooperative pool's threads while it waits for the process.
final class RunningServer: @unchecked Sendable {
    let process = Process()
    let feedPort: Int
    let httpPort: Int
    private let errors: PipeDrain

    /// - Parameters:
    ///   - environment: variables added to the test's own environment.
    ///   - openFileLimits: the soft and (when given) hard open-file limits the service starts with, as a shell's
    ///     `ulimit` sets them before it runs a program; the test's own when nil.
    init(
        _ arguments: [String] = [], environment: [String: String] = [:],
        openFileLimits: (soft: Int, hard: Int?)? = nil
    ) throws {
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let serve = ["serve", "--feed", "127.0.0.1:0", "--http", "127.0.0.1:0", "--log-level", "info"] + arguments
        if let openFileLimits {
            // The shell lowers its limits and then becomes the service (exec): the process is the service's.
            let hard = openFileLimits.hard.map { " && ulimit -H -n \($0)" } ?? ""
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments =
                [
                    "-c",
                    "{ ulimit -S -n \(openFileLimits.soft)\(hard); } || { echo 'ulimit refused the limits' >&2; exit 97; }"
                        + "; exec \"$0\" \"$@\"", CLI.binary.path,
                ] + serve
        } else {
            process.executableURL = CLI.binary
            process.arguments = serve
        }
        process.standardOutput = FileHandle.nullDevice
        let pipe = Pipe()
        process.standardError = pipe
        try process.run()
        errors = PipeDrain(pipe)
        let deadline = ContinuousClock.now + TestDeadline.serverReady
        var ports: (Int, Int)?
        while ports == nil && process.isRunning && ContinuousClock.now < deadline {
            ports = RunningServer.ports(in: errors.text)
            if ports == nil { Thread.sleep(forTimeInterval: 0.02) }
        }
        guard let ports else {
            process.terminate()
            _ = CLI.waitForExit(process, timeout: TestDeadline.processExit)
            throw CocoaError(
                .fileReadUnknown,
                userInfo: [
                    NSLocalizedDescriptionKey:
                        "presence serve did not say its ports within \(TestDeadline.serverReady); its log:\n\(errors.text)"
                ])
        }
        (feedPort, httpPort) = ports
    }

    /// Starts the service from an async test, waiting for its ports on a thread of its own rather than on one of
    /// the cooperative pool's (a service built for ThreadSanitizer takes seconds to start on a loaded machine).
    static func started(
        _ arguments: [String] = [], environment: [String: String] = [:], openFileLimits: (soft: Int, hard: Int?)? = nil
    ) async throws -> RunningServer {
        try await onAThreadOfItsOwn {
            try RunningServer(arguments, environment: environment, openFileLimits: openFileLimits)
        }
    }

    /// ``stop()`` from an async test, waited for on a thread of its own.
    func stopped(within deadline: Duration = TestDeadline.processExit) async -> Int32 {
        let status = await onAThreadOfItsOwn { self.terminate(within: deadline) }
        recordShutDownLoopMisuse()
        return status
    }

    /// What the service logged so far.
    var log: String { errors.text }

    /// Whether the service logs a line containing `text` within `deadline`. A line logged just after the state a
    /// test waited for (a flag in an answer, a readiness) reaches the pipe a moment later, so a test that reads the
    /// log right after seeing that state waits for the line instead of expecting it there already.
    func logs(_ text: String, within deadline: Duration = TestDeadline.condition) async -> Bool {
        await errors.contains(text, within: deadline)
    }

    /// `feed=127.0.0.1:N http=127.0.0.1:M` from the "presence service running" line.
    static func ports(in log: String) -> (Int, Int)? {
        guard let line = log.split(separator: "\n").first(where: { $0.contains("presence service running") }) else {
            return nil
        }
        func port(_ key: String) -> Int? {
            guard let range = line.range(of: key + "=127.0.0.1:") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        guard let feed = port("feed"), let http = port("http") else { return nil }
        return (feed, http)
    }

    /// What SwiftNIO prints when a task is scheduled on an event loop that has shut down: work the service left
    /// running past its own shutdown, which a later SwiftNIO turns into a crash.
    static let shutDownLoopMisuse = "Cannot schedule tasks on an EventLoop that has already shut down"

    /// SIGTERM, then the exit status; -1 when it was still running after `deadline` (it is killed then). Once it
    /// has exited, ``log`` holds everything it wrote. A service that scheduled work on a shut-down event loop on its
    /// way out (``shutDownLoopMisuse``) is an issue of the test that stopped it, whether or not the test looks at
    /// the status.
    func stop(within deadline: Duration = TestDeadline.processExit) -> Int32 {
        let status = terminate(within: deadline)
        recordShutDownLoopMisuse()
        return status
    }

    /// SIGTERM and the wait for the exit, with nothing recorded: what ``stop(within:)`` and ``stopped(within:)``
    /// share, the second on a thread of its own, where Swift Testing could not tell which test an issue is of.
    private func terminate(within deadline: Duration) -> Int32 {
        process.terminate()
        guard CLI.waitForExit(process, timeout: deadline) else { return -1 }
        errors.finish(within: TestDeadline.read)
        return process.terminationStatus
    }

    /// Records an issue, with the log, when the service printed SwiftNIO's warning (or, with `SWIFTNIO_STRICT=1`,
    /// crashed) on scheduling work on an event loop that had shut down.
    private func recordShutDownLoopMisuse() {
        guard log.contains(Self.shutDownLoopMisuse) else { return }
        Issue.record(
            "presence serve scheduled work on a shut-down event loop as it stopped; its log:\n\(log.suffix(4000))")
    }

    /// SIGKILL: the service dies at once, as in a crash or an out-of-memory kill, with nothing closed or saved.
    func crash() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        errors.finish(within: TestDeadline.read)
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()  // or Foundation keeps the Process
    }
}

@Suite("presence serve, query --server and stats --server, end to end", .realServers)
struct ServeCommandTests {
    static func send(_ text: String, toPort port: Int) throws {
        let descriptor = try LoopbackTCP.connect(port: port)
        defer { close(descriptor) }
        try Array(text.utf8).withUnsafeBytes { try LoopbackTCP.sendAll(descriptor, $0) }
    }

    @Test func watchPrintsEachChangeAsItHappensReconnectsAfterARestartAndExits0OnSIGINT() async throws {
        var server = try await RunningServer.started()
        let httpPort = server.httpPort
        let watch = Process()
        watch.executableURL = CLI.binary
        watch.arguments = [
            "watch", "--server", "http://127.0.0.1:\(httpPort)", "--format", "json", "--reconnect-delay", "0.2",
            "alice@example.com",
        ]
        let output = Pipe()
        watch.standardOutput = output
        watch.standardError = Pipe()
        try watch.run()
        let lines = PipeDrain(output)
        defer { if watch.isRunning { kill(watch.processIdentifier, SIGKILL) } }
        #expect(await lines.contains("\"state\":\"unknown\""), "the snapshot comes first")
        try ServeCommandTests.send(
            "<presence from='alice@example.com/desk'><show>dnd</show><status>Focus</status></presence>",
            toPort: server.feedPort)
        #expect(await lines.contains("\"status\":\"Focus\""))

        // The service restarts on the same port with an empty store: watch reconnects and shows the new truth.
        #expect(await server.stopped() == 0)
        server = try await RunningServer.started(["--http", "127.0.0.1:\(httpPort)"])
        try ServeCommandTests.send(
            "<presence from='alice@example.com/desk'><show>away</show><status>Back at 3</status></presence>",
            toPort: server.feedPort)
        #expect(await lines.contains("\"status\":\"Back at 3\""))
        let objects = lines.text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(objects.count == lines.text.split(separator: "\n").count, "one JSON object per line")

        kill(watch.processIdentifier, SIGINT)
        #expect(await onAThreadOfItsOwn { CLI.waitForExit(watch, timeout: TestDeadline.processExit) })
        #expect(watch.terminationStatus == 0)

        // Text: one line per change, with what a screen shows.
        let textWatch = Process()
        textWatch.executableURL = CLI.binary
        textWatch.arguments = ["watch", "--server", "http://127.0.0.1:\(httpPort)", "alice@example.com"]
        let textOutput = Pipe()
        textWatch.standardOutput = textOutput
        try textWatch.run()
        let textLines = PipeDrain(textOutput)
        #expect(await textLines.contains("\n"), "watch prints the status it starts from")
        kill(textWatch.processIdentifier, SIGINT)
        #expect(await onAThreadOfItsOwn { CLI.waitForExit(textWatch, timeout: TestDeadline.processExit) })
        #expect(textLines.text.contains(" alice@example.com available away \"Back at 3\""))
        #expect(await server.stopped() == 0)
    }

    @Test func watchEndsWithTheServicesReasonWhenTheServiceRefusesTheStream() async throws {
        let server = try await RunningServer.started(["--events-max-jids", "1"])
        defer { _ = server.stop() }
        // The refusal comes on a connection the service keeps open: watch reads the answer's length, not to a close.
        let watch = try await CLI.run(
            ["watch", "--server", "http://127.0.0.1:\(server.httpPort)", "alice@example.com", "bob@example.com"],
            timeout: TestDeadline.processExit)
        #expect(!watch.timedOut, "watch ended instead of waiting: \(watch.stderr)")
        #expect(watch.status != 0)
        #expect(watch.stderr.contains("the service answered 4"), "\(watch.stderr)")
    }

    @Test func anAnswerLargerThanTheClientsLimitIsReportedAsTooLargeWithTheFlagToRaiseIt() async throws {
        let server = try await RunningServer.started()
        defer { _ = server.stop() }
        let api = "http://127.0.0.1:\(server.httpPort)"
        for command in [
            ["query", "--server", api, "alice@example.com"], ["stats", "--server", api],
            ["watch", "--server", api, "alice@example.com"],
        ] {
            let result = try await CLI.run(command + ["--max-answer-bytes", "64"])
            #expect(result.status == 1 && !result.timedOut, "\(command[0]): \(result.stderr)")
            #expect(
                result.stderr.contains("larger than 64 bytes (--max-answer-bytes)"), "\(command[0]): \(result.stderr)")
            #expect(!result.stderr.contains("cannot reach"), "\(command[0]): the service was reached")
        }
        let enough = try await CLI.run(["query", "--server", api, "alice@example.com", "--max-answer-bytes", "64KiB"])
        #expect(enough.status == 0, "\(enough.stderr)")
    }

    @Test func aServedStreamIsQueryableFromTheCLIAndSIGTERMExitsCleanly() async throws {
        let server = try RunningServer()
        let api = "http://127.0.0.1:\(server.httpPort)"
        try ServeCommandTests.send(
            "<presence from='alice@example.com/desk'><show>away</show><status>Lunch</status></presence>",
            toPort: server.feedPort)
        var result = CLIResult(status: -1, stdout: "", stderr: "not run", timedOut: false)
        _ = try await eventually {
            result = try await CLI.run([
                "query", "--server", api, "--format", "json", "alice@example.com", "bob@example.com",
            ])
            return result.stdout.contains("\"available\"")
        }
        #expect(result.status == 0, "\(result.stderr)")
        let results = try #require(result.json?["results"] as? [[String: Any]])
        #expect(results.map { $0["state"] as? String } == ["available", "unknown"])
        #expect(results[0]["status"] as? String == "Lunch")
        let stats = try await CLI.run(["stats", "--server", api, "--format", "json"])
        #expect(stats.status == 0)
        #expect(stats.json?["updatesApplied"] as? Int == 1)
        #expect(stats.json?["storage"] as? String == "dictionary")
        let text = try await CLI.run(["stats", "--server", api])
        #expect(text.stdout.contains("updates applied"))
        let invalid = try await TestHTTP.get(port: server.httpPort, path: "/v1/presence/a@b@c")
        #expect(invalid.status == 400)
        let body = try JSONSerialization.jsonObject(with: Data(invalid.body)) as? [String: [String: Any]]
        #expect(body?["error"]?["condition"] as? String == "jid-malformed", "the documented error object")
        #expect(server.stop() == 0, "SIGTERM ends the service cleanly")
    }

    @Test func eventLoopsSetsHowManyThreadsRunTheConnections() async throws {
        // SwiftNIO names an event loop group's threads `NIO-ELT-<group>-#<n>`.
        func loops(of server: RunningServer) throws -> Int {
            let tasks = "/proc/\(server.process.processIdentifier)/task"
            return try FileManager.default.contentsOfDirectory(atPath: tasks).filter { task in
                let name = (try? String(contentsOfFile: "\(tasks)/\(task)/comm", encoding: .utf8)) ?? ""
                return name.hasPrefix("NIO-ELT-")
            }.count
        }
        let three = try await RunningServer.started(["--event-loops", "3"])
        #expect(try loops(of: three) == 3)
        let threeStopped = await three.stopped()
        #expect(threeStopped == 0, "\(three.log.suffix(3000))")
        let byDefault = try await RunningServer.started()
        #expect(try loops(of: byDefault) == ProcessInfo.processInfo.activeProcessorCount, "one per core")
        let byDefaultStopped = await byDefault.stopped()
        #expect(byDefaultStopped == 0, "\(byDefault.log.suffix(3000))")
    }

    @Test func serveRefusesNonLoopbackAddressesWithoutTheFlag() throws {
        let result = try CLI.run(["serve", "--http", "0.0.0.0:8080"], timeout: TestDeadline.processExit)
        #expect(result.status == 64)
        #expect(result.stderr.contains("--allow-remote"))
    }

    @Test func resyncSettingsWithoutAnXMPPSourceOrOutOfRangeAreRefused() async throws {
        for (arguments, says) in [
            (["--resync-interval", "5"], "need --xmpp-jid"), (["--resync-members", "all"], "need --xmpp-jid"),
            (["--resync-interval", "0"], "between 0.1 and 604800 seconds, or never"),
            (["--resync-interval", "soon"], "resync-interval"), (["--resync-members", "some"], "resync-members"),
        ] {
            let result = try await CLI.run(["serve"] + arguments, timeout: TestDeadline.processExit)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.contains(says), "\(arguments): \(result.stderr)")
        }
    }

    @Test func aServerThatIsNotThereIsAClearError() throws {
        let (descriptor, port) = LoopbackTCP.boundSocket(listening: false)  // bound, not listening: connections are refused
        defer { close(descriptor) }
        let result = try CLI.run(["stats", "--server", "http://127.0.0.1:\(port)"], timeout: TestDeadline.processExit)
        #expect(result.status != 0)
        #expect(result.stderr.contains("cannot reach the service"))
    }
}

@Suite("presence serve fails cleanly", .realServers)
struct ServeFailureTests {
    @Test func aPortInUseEndsTheServiceWithAnErrorInsteadOfHanging() throws {
        let (descriptor, busy) = LoopbackTCP.boundSocket(listening: true)
        defer { close(descriptor) }
        let result = try CLI.run(
            ["serve", "--feed", "127.0.0.1:\(busy)", "--http", "127.0.0.1:0", "--log-level", "critical"],
            timeout: TestDeadline.processExit)
        #expect(!result.timedOut, "serve hung on a port in use")
        #expect(result.status != 0)
    }
}
