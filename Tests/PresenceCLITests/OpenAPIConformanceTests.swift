import Foundation
import PresenceTestSupport
import Testing

/// The OpenAPI document (`GET /openapi.yaml`, `Sources/PresenceService/OpenAPI/openapi.yaml`) says what the
/// service really answers: every route's real responses, errors included, validated against it with an
/// independent JSON Schema validator (Debian's python3-jsonschema), and every route of the document exercised.
@Suite("The OpenAPI document describes every real response", .realServers)
struct OpenAPIConformanceTests {
    static let document = CLI.repository.appendingPathComponent("Sources/PresenceService/OpenAPI/openapi.yaml")

    /// The responses seen, as the validator reads them.
    final class Exchanges {
        var recorded: [[String: Any]] = []

        @discardableResult
        func get(_ path: String, port: Int, headers: [String: String] = [:]) async throws -> TestHTTP.Response {
            let response = try await TestHTTP.get(port: port, path: path, headers: headers)
            recorded.append([
                "path": path, "status": response.status, "contentType": response.headers["content-type"] ?? "",
                "body": String(decoding: response.body, as: UTF8.self),
            ])
            return response
        }

        /// Opens a change stream, reads its first `count` events, and records them.
        func stream(_ path: String, port: Int, events count: Int) async throws {
            let reader = try await TestEventStream(host: "127.0.0.1", port: port, path: path)
            defer { reader.close() }
            var events: [[String: String]] = []
            while events.count < count, let event = try await reader.next() {
                events.append(["name": event.name, "data": event.data])
            }
            recorded.append([
                "path": path, "status": reader.status, "contentType": reader.headers["content-type"] ?? "",
                "body": "", "events": events,
            ])
        }

        /// A change stream the service refuses: an ordinary response with an error document.
        func refusedStream(_ path: String, port: Int) async throws {
            try await get(path, port: port, headers: ["Accept": "text/event-stream"])
        }
    }

    static func feed(_ sample: String, port: Int) throws {
        let bytes = try Data(contentsOf: CLI.repository.appendingPathComponent("Samples/\(sample)"))
        let descriptor = try LoopbackTCP.connect(port: port)
        defer { close(descriptor) }
        try bytes.withUnsafeBytes { try LoopbackTCP.sendAll(descriptor, $0) }
    }

    @Test func everyRouteAnswersAsTheDocumentSays() async throws {
        let exchanges = Exchanges()
        let alice = "alice.smith@engineering.example.com"

        // A service fed from its feed port, open on loopback.
        let open = try RunningServer(["--events-max-jids", "3", "--events-max-streams", "2", "--events-heartbeat", "1"])
        defer { _ = open.stop() }
        try Self.feed("multi-device.xml", port: open.feedPort)
        #expect(
            try await eventually {
                let answer = try await TestHTTP.get(port: open.httpPort, path: "/v1/presence/\(alice)")
                return String(decoding: answer.body, as: UTF8.self).contains("\"state\":\"available\"")
            })
        let port = open.httpPort
        try await exchanges.get("/v1/presence/\(alice)", port: port)
        try await exchanges.get("/v1/presence/nobody@example.com", port: port)
        try await exchanges.get("/v1/presence/\(alice)?policy=cache-only", port: port)
        try await exchanges.get("/v1/presence?jid=\(alice)&jid=nobody@example.com", port: port)
        try await exchanges.get("/v1/presence/not%20a%20jid@", port: port)
        try await exchanges.get("/v1/presence", port: port)
        try await exchanges.get("/v1/presence?jid=\(alice)&policy=sometimes", port: port)
        try await exchanges.get("/v1/presence?jid=\(alice)&policy=probe", port: port)
        let badge = try await exchanges.get("/v1/presence/\(alice)/badge.svg", port: port)
        try await exchanges.get(
            "/v1/presence/\(alice)/badge.svg", port: port, headers: ["If-None-Match": badge.headers["etag"] ?? ""])
        try await exchanges.get("/v1/presence/@/badge.svg", port: port)
        try await exchanges.get("/v1/stats", port: port)
        try await exchanges.get("/metrics", port: port)
        try await exchanges.get("/healthz", port: port)
        try await exchanges.get("/readyz", port: port)
        for file in ["/", "/people.js", "/people.css"] {
            let page = try await exchanges.get(file, port: port)
            if let etag = page.headers["etag"] {
                try await exchanges.get(file, port: port, headers: ["If-None-Match": etag])
            }
        }
        let served = try await exchanges.get("/openapi.yaml", port: port)
        let repository = Array(try Data(contentsOf: Self.document))
        #expect(
            served.body == repository,
            "a service without tokens and with --events-max-jids 3 serves the repository's file as it is written")
        try await exchanges.get("/openapi.yaml", port: port, headers: ["If-None-Match": served.headers["etag"] ?? ""])
        try await exchanges.stream("/v1/presence/events?jid=\(alice)&jid=nobody@example.com", port: port, events: 2)
        try await exchanges.refusedStream("/v1/presence/events?jid=a@x&jid=b@x&jid=c@x&jid=d@x", port: port)
        try await exchanges.refusedStream("/v1/presence/events?jid=a@", port: port)
        try await exchanges.stream(
            "/v1/presence/events?snapshot=chunks&jid=\(alice)&jid=nobody@example.com", port: port, events: 1)
        try await exchanges.refusedStream("/v1/presence/events?snapshot=whole", port: port)
        // At most two streams at once. (The service notices a stream's reader is gone at its next write: wait for
        // the ones above to be let go before opening more.)
        func noStreamOpen() async throws -> Bool {
            try await eventually(timeout: TestDeadline.condition) {
                let stats = try await TestHTTP.get(port: port, path: "/v1/stats")
                return (try JSONSerialization.jsonObject(with: Data(stats.body)) as? [String: Any])?["eventStreams"]
                    as? Int == 0
            }
        }
        #expect(try await noStreamOpen())
        try await exchanges.stream(
            "/v1/presence/events?snapshot=table&jid=\(alice)&jid=nobody@example.com", port: port, events: 1)
        // Two streams open: the third is one too many.
        #expect(try await noStreamOpen())
        let first = try await TestEventStream(host: "127.0.0.1", port: port, path: "/v1/presence/events?jid=\(alice)")
        let second = try await TestEventStream(host: "127.0.0.1", port: port, path: "/v1/presence/events?jid=\(alice)")
        #expect(first.status == 200 && second.status == 200)
        _ = try await first.next()
        _ = try await second.next()
        try await exchanges.refusedStream("/v1/presence/events?jid=\(alice)", port: port)
        first.close()
        second.close()

        // Behind API tokens: a request without one.
        let tokens = FileManager.default.temporaryDirectory.appendingPathComponent("presence-openapi-\(UUID())")
        try "openapi-test-token-0123456789 tests\n".write(to: tokens, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: tokens) }
        let guarded = try RunningServer(["--api-token-file", tokens.path])
        defer { _ = guarded.stop() }
        try await exchanges.get("/v1/stats", port: guarded.httpPort)
        try await exchanges.get("/v1/presence/\(alice)", port: guarded.httpPort)
        let guardedDocument = try await exchanges.get("/openapi.yaml", port: guarded.httpPort)
        #expect(
            guardedDocument.body == repository, "a service with tokens serves the same file")

        // A replica that is not ready and refuses: its XMPP server is not there.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("presence-openapi-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let refusing = try RunningServer(
            ServeReplicaTests.replicaArgumentsToNowhere(in: directory) + ["--when-not-ready", "refuse"])
        defer { _ = refusing.stop() }
        try await exchanges.get("/readyz", port: refusing.httpPort)
        try await exchanges.get("/v1/presence/\(alice)", port: refusing.httpPort)
        try await exchanges.get("/v1/presence?jid=\(alice)", port: refusing.httpPort)
        try await exchanges.get("/v1/presence/\(alice)/badge.svg", port: refusing.httpPort)
        try await exchanges.refusedStream("/v1/presence/events?jid=\(alice)", port: refusing.httpPort)

        let file = directory.appendingPathComponent("exchanges.json")
        try JSONSerialization.data(withJSONObject: exchanges.recorded).write(to: file)
        let script = Bundle.module.url(forResource: "openapi_validate", withExtension: "py")!
        let output = Pipe()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script.path, Self.document.path, file.path]
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let drained = PipeDrain(output)
        #expect(CLI.waitForExit(process, timeout: TestDeadline.processExit))
        #expect(process.terminationStatus == 0, "\(drained.finish())")
        #expect(exchanges.recorded.count >= 30)
    }
}
