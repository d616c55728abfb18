import Foundation
import PresenceTestSupport
import Testing

/// The HTTP API against its own document, by an independent property-based tester: schemathesis (PyPI, pinned in
/// script/bootstrap, which installs it into the project's virtual environment, .build/python) generates requests from `/openapi.yaml` as the running service serves it, valid ones and
/// invalid ones, and checks every answer with all of its checks (status codes and response schemas documented,
/// valid data accepted and invalid data refused, methods, authentication, the change stream's events). A failure
/// prints schemathesis' report, with each case's `curl` and `st replay` reproduction.
///
/// A short run per configuration here (`CONTRACT_FUZZ_EXAMPLES`, 40 by default; not a `PRESENCE_*` name, which the
/// service would take for its own configuration), from a fixed seed (`CONTRACT_FUZZ_SEED`), so that a commit is
/// tested with the same generated cases on every run; the long campaign, the same tests with more examples, a seed
/// of its own (`CONTRACT_FUZZ_SEED=random`) and `CONTRACT_FUZZ_REPORTS` naming a directory that keeps each report,
/// is in Documentation/Reliability.md.
@Suite("The HTTP API keeps its document's promises under a property-based tester", .realServers)
struct APIContractFuzzTests {
    static let examples = ProcessInfo.processInfo.environment["CONTRACT_FUZZ_EXAMPLES"] ?? "40"
    /// schemathesis' `--seed`, or none (a new seed each run) for `random`.
    static let seed: String? = {
        let value = ProcessInfo.processInfo.environment["CONTRACT_FUZZ_SEED"] ?? "20261126"
        return value == "random" ? nil : value
    }()

    /// The schemathesis script/bootstrap installs into .build/python; the one on the PATH when there is none there.
    static let schemathesis: [String] = {
        let installed = CLI.repository.appendingPathComponent(".build/python/bin/schemathesis").path
        return FileManager.default.isExecutableFile(atPath: installed) ? [installed] : ["schemathesis"]
    }()

    /// Runs schemathesis against the service on `port`, with `headers` on every request, from the document the
    /// service serves or from `document` (a file); its exit status and report.
    static func fuzz(
        port: Int, headers: [String] = [], document: URL? = nil, in directory: URL
    ) throws -> (status: Int32, report: String) {
        // A change stream never ends: read its first event, then judge it.
        let configuration = directory.appendingPathComponent("schemathesis.toml")
        try "max-stream-events = 1\n".write(to: configuration, atomically: true, encoding: .utf8)
        let report = directory.appendingPathComponent("schemathesis.txt")
        _ = FileManager.default.createFile(atPath: report.path, contents: nil)
        let output = try FileHandle(forWritingTo: report)
        defer { try? output.close() }
        let service = "http://127.0.0.1:\(port)"
        let location = document.map { [$0.path, "--url", service] } ?? ["\(service)/openapi.yaml"]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            schemathesis + ["--config-file", configuration.path, "--no-color", "run"] + location + [
                "--checks", "all", "--mode", "all",
                "--max-examples", examples, "--request-timeout", "5", "--workers", "2",
                // Hypothesis' checks on its own generation (too slow, data too large): on two cores shared with the
                // rest of the suite, a batch of up to 1,000 pattern-made JIDs trips them; they say nothing of the API.
                "--suppress-health-check", "all",
            ] + (seed.map { ["--seed", $0] } ?? []) + headers.flatMap { ["--header", $0] }
        process.currentDirectoryURL = directory
        process.standardOutput = output
        process.standardError = output
        try process.run()
        // About 30 cases a second here, a dozen operations: a generous bound that grows with the examples asked.
        let finished = CLI.waitForExit(process, timeout: .seconds(max(300, 2 * (Int(examples) ?? 40))))
        let text = (try? String(contentsOf: report, encoding: .utf8)) ?? ""
        return (finished ? process.terminationStatus : -1, text)
    }

    static func expectNoFailure(_ run: (status: Int32, report: String), _ configuration: String) {
        if let directory = ProcessInfo.processInfo.environment["CONTRACT_FUZZ_REPORTS"] {
            let name = configuration.replacingOccurrences(of: " ", with: "-") + ".txt"
            try? run.report.write(
                to: URL(fileURLWithPath: directory).appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        #expect(run.status != 127, "schemathesis is not installed: script/bootstrap installs it")
        #expect(run.status == 0, "schemathesis found failures on \(configuration):\n\(run.report.suffix(12_000))")
        #expect(
            run.report.contains(" passed"), "\(configuration): schemathesis ran no case:\n\(run.report.suffix(4000))")
    }

    private static func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("presence-fuzz-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func anOpenServiceKeepsItsDocumentsPromises() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let service = try RunningServer()
        defer { _ = service.stop() }
        try OpenAPIConformanceTests.feed("multi-device.xml", port: service.feedPort)
        let run = try await onAThreadOfItsOwn { try Self.fuzz(port: service.httpPort, in: directory) }
        Self.expectNoFailure(run, "a service without tokens")
    }

    @Test func aServiceThatRequiresTokensKeepsItsDocumentsPromises() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let token = "fuzz-token-0123456789abcdef"
        let tokens = directory.appendingPathComponent("tokens")
        try "\(token) fuzzer\n".write(to: tokens, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: tokens.path)
        let service = try RunningServer(["--api-token-file", tokens.path])
        defer { _ = service.stop() }
        try OpenAPIConformanceTests.feed("multi-device.xml", port: service.feedPort)
        // The document is one for every deployment: its `security` lets a request without a token through as an
        // alternative, which a deployment with tokens refuses (as its description says). schemathesis reads an
        // optional requirement as "not enforced" and skips its authentication checks, so it is given the document
        // as this deployment reads it: the same, without that alternative. Every guarded operation is then asked
        // without the token and with a wrong one as well.
        let served = String(
            decoding: try await TestHTTP.get(port: service.httpPort, path: "/openapi.yaml").body, as: UTF8.self)
        let anonymous = "\n  - {} # a deployment without --api-token-file\n"
        try #require(served.contains(anonymous), "the document lets a request without a token through")
        let document = directory.appendingPathComponent("openapi-tokens-required.yaml")
        try served.replacingOccurrences(of: anonymous, with: "\n").write(to: document, atomically: true, encoding: .utf8)
        let run = try await onAThreadOfItsOwn {
            try Self.fuzz(
                port: service.httpPort, headers: ["Authorization: Bearer \(token)"], document: document, in: directory)
        }
        Self.expectNoFailure(run, "a service that requires tokens")
    }

    @Test func aServiceWatchingProsodyKeepsItsDocumentsPromises() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await XMPPServerKind.prosody.start(
            accounts: ["watcher": "fuzz-the-watcher", "alice": "a", "bob": "b"],
            groups: ["Staff": ["watcher", "alice", "bob"]])
        defer { server.stop() }
        let alice = try await MemberClient("alice", password: "a", resource: "laptop", server: server.endpoint)
        try await alice.available(show: "away", status: "Back at two", priority: 1)
        let password = directory.appendingPathComponent("watcher.password")
        try "fuzz-the-watcher\n".write(to: password, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: password.path)
        let service = try RunningServer([
            "--xmpp-jid", "watcher@\(server.domain)", "--xmpp-password-file", password.path,
            "--xmpp-host", "127.0.0.1", "--xmpp-port", String(server.port),
        ])
        defer { _ = service.stop() }
        #expect(
            try await eventually {
                let result = try await CLI.run([
                    "query", "--server", "http://127.0.0.1:\(service.httpPort)", "--format", "json",
                    "alice@\(server.domain)",
                ])
                let document = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
                return ((document?["results"] as? [[String: Any]])?.first?["live"] as? Bool) == true
            })
        let run = try await onAThreadOfItsOwn { try Self.fuzz(port: service.httpPort, in: directory) }
        Self.expectNoFailure(run, "a service watching Prosody")
        _ = alice
    }
}
