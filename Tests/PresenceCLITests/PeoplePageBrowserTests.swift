import Foundation
import PresenceTestSupport
import Testing

/// The people page at `/` in a real browser: Debian's chromium, driven through chromedriver by python3-selenium.
@Suite("The people page in a real browser", .realServers)
struct PeoplePageBrowserTests {
    /// Where the page's screenshot is kept after the test: `.build/artifacts/people-page.png`.
    static let screenshot = CLI.repository.appendingPathComponent(".build/artifacts/people-page.png")

    @Test func aPersonFoundBySearchChangesDotAndTextLiveWithoutAReload() async throws {
        guard Self.browserIsInstalled() else { return }
        let server = try await RunningServer.started()
        defer { _ = server.stop() }
        try FileManager.default.createDirectory(
            at: Self.screenshot.deletingLastPathComponent(), withIntermediateDirectories: true)
        let page = try await TestHTTP.get(port: server.httpPort, path: "/")
        #expect(page.status == 200 && page.headers["content-type"]?.hasPrefix("text/html") == true)
        #expect(!String(decoding: page.body, as: UTF8.self).contains("http"), "nothing from another origin")

        try await Self.runBrowserScript(
            "people_page_browser",
            ["http://127.0.0.1:\(server.httpPort)", String(server.feedPort), Self.screenshot.path, "5000"])
        #expect(FileManager.default.fileExists(atPath: Self.screenshot.path), "the screenshot is kept")
    }

    @Test func behindAPITokensThePageAsksForOneUntilItIsRightAndThenListsLive() async throws {
        guard Self.browserIsInstalled() else { return }
        let token = "browser-token-0123456789+/="
        let tokens = FileManager.default.temporaryDirectory.appendingPathComponent("presence-tokens-\(UUID())")
        try "\(token) browser\n".write(to: tokens, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: tokens) }
        let server = try await RunningServer.started(["--api-token-file", tokens.path])
        defer { _ = server.stop() }
        try await Self.runBrowserScript(
            "people_page_token_browser", ["http://127.0.0.1:\(server.httpPort)", String(server.feedPort), token])
    }

    @Test func aPageWhoseStreamAFullReplicaRefusesOpensItAgainWaitingLongerEachTimeAndListsEveryoneOnceThereIsRoom()
        async throws
    {
        guard Self.browserIsInstalled() else { return }
        let server = try await RunningServer.started(["--events-max-streams", "1"])
        defer { _ = server.stop() }
        try await Self.runBrowserScript(
            "people_page_refused_browser", ["http://127.0.0.1:\(server.httpPort)", String(server.feedPort)])
    }

    @Test func aPageWhoseReplicaDiesKeepsNewerStatusesThanTheNextReplicasAndShowsWhomItNeverHeardOfAsUnknown()
        async throws
    {
        guard Self.browserIsInstalled() else { return }
        // Fewer JIDs per request than the page first asks for again: it must ask in smaller parts.
        var replicas: [RunningServer] = []
        for _ in 0 ..< 3 { replicas.append(try await RunningServer.started(["--http-max-batch", "5"])) }
        defer { for replica in replicas where replica.process.isRunning { _ = replica.stop() } }
        let nginx = try NginxBalancer(replicaPorts: replicas.map(\.httpPort))
        try await Self.runBrowserScript(
            "people_page_failover_browser",
            [
                "http://127.0.0.1:\(nginx.port)",
                replicas.map { "\($0.httpPort):\($0.feedPort):\($0.process.processIdentifier)" }.joined(separator: ","),
            ])
    }

    /// Whether chromium, its driver and selenium are there; records an issue naming the packages when not.
    static func browserIsInstalled() -> Bool {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"),
            FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"),
            (try? Tool.run("/usr/bin/python3", ["-c", "import selenium"])) == 0
        else {
            Issue.record(
                "chromium, chromium-driver and python3-selenium are needed (apt-get install them; .ci/run does)")
            return false
        }
        return true
    }

    /// Runs one of the browser scripts in `Resources` with `arguments`; it exits 0 when every check held. The
    /// browser runs for seconds: it is waited for on a thread of its own, so the tests beside it keep theirs.
    static func runBrowserScript(_ name: String, _ arguments: [String]) async throws {
        let script = Bundle.module.url(forResource: name, withExtension: "py")!
        let (finished, status, output) = try await onAThreadOfItsOwn {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments = [script.path] + arguments
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            try process.run()
            let drained = PipeDrain(output)
            let finished = CLI.waitForExit(process, timeout: TestDeadline.processExit)
            return (finished, process.terminationStatus, drained.finish(within: TestDeadline.read))
        }
        #expect(finished, "the browser test finished: \(output)")
        #expect(finished && status == 0, "\(output)")
    }
}
