import Foundation
import PresenceService
import PresenceWire
import Testing

/// RFC 9110's method rules: HEAD wherever GET is, OPTIONS with `Allow`, 405 with `Allow` for another method on a path
/// the API serves, 404 only for a path it does not.
@Suite("Every path takes GET, HEAD and OPTIONS, and says so when asked another method")
struct HTTPMethodTests {
    typealias Wire = QueryPathEquivalenceTests

    /// One request with `Connection: close`, and its answer.
    static func send(_ method: String, _ target: String, port: Int) async throws -> Wire.WireResponse {
        let client = try await Feeder.connect(port: port)
        defer { client.close() }
        try await client.send("\(method) \(target) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let answers = Wire.responses(try await client.readUntilClosed().text, bodiless: [method == "HEAD"])
        try #require(answers.count == 1, "\(method) \(target): \(answers)")
        return answers[0]
    }

    static let paths = [
        "/", "/people.js", "/people.css", "/openapi.yaml", "/healthz", "/readyz", "/metrics", "/v1/stats",
        "/v1/presence?jid=a@example.com", "/v1/presence/a@example.com", "/v1/presence/a@example.com/badge.svg",
        "/v1/presence/events?jid=a@example.com",
    ]

    @Test func headAnswersTheGetsStatusAndFieldsWithoutABodyOnEveryPath() async throws {
        try await withService { ports in
            for path in Self.paths where !path.hasPrefix("/v1/presence/events") {
                let get = try await Self.send("GET", path, port: ports.http)
                let head = try await Self.send("HEAD", path, port: ports.http)
                #expect(head.status == get.status && head.status == 200, "\(path): \(head)")
                var fields = get.headers
                // Metrics and statistics may change between the two requests; their lengths with them.
                if path == "/metrics" || path == "/v1/stats" { fields["content-length"] = head.headers["content-length"] }
                #expect(head.headers == fields, "HEAD \(path): the GET's fields")
                #expect(head.body.isEmpty)
            }
        }
    }

    /// A keep-alive connection mixes answers written on the event loop with the router's: a HEAD answered on the
    /// loop must not make a later routed GET lose its body, nor a GET answered on the loop make a later routed HEAD
    /// carry one. Pipelined on one connection: the requests before the first routed one are answered on the loop
    /// (a GET and two HEADs), it and every one after it by the router (GETs and a HEAD).
    @Test func aConnectionMixingHeadAndGetOnBothPathsFramesEveryAnswerByItsOwnMethod() async throws {
        try await withService { ports in
            try await feedAliceAndBob(ports)
            let loop = "/v1/presence/alice@example.com"  // a storage hit: the event loop's
            let routed = "/healthz"  // a resource: the router's
            let requests: [(method: String, target: String)] = [
                ("GET", loop), ("HEAD", loop), ("HEAD", loop), ("GET", routed), ("GET", loop), ("HEAD", routed),
                ("GET", routed), ("HEAD", loop), ("GET", routed),
            ]
            var text = ""
            for (index, request) in requests.enumerated() {
                text += "\(request.method) \(request.target) HTTP/1.1\r\nHost: x\r\n"
                text += index == requests.count - 1 ? "Connection: close\r\n\r\n" : "\r\n"
            }
            let client = try await Feeder.connect(port: ports.http)
            defer { client.close() }
            try await client.send(text)
            let raw = try await client.readUntilClosed().text
            let answers = Wire.responses(raw, bodiless: requests.map { $0.method == "HEAD" })
            try #require(answers.count == requests.count, "\(answers)\n\(raw)")
            for (request, answer) in zip(requests, answers) {
                #expect(answer.status == 200, "\(request.method) \(request.target): \(answer)")
                if request.method == "HEAD" {
                    #expect(answer.body.isEmpty, "\(request.method) \(request.target)")
                } else {
                    #expect(answer.body.utf8.count == Int(answer.headers["content-length"] ?? ""), "\(request)")
                    #expect(request.target != routed || answer.body == "ok\n", "\(request.target): \(answer)")
                }
            }
        }
    }

    @Test func headOfTheChangeStreamOpensNoStream() async throws {
        try await withService { ports in
            let head = try await Self.send("HEAD", "/v1/presence/events?jid=a@example.com", port: ports.http)
            #expect(head.status == 200 && head.headers["content-type"] == "text/event-stream; charset=utf-8")
            let stats = try await get(ServiceStats.self, "/v1/stats", port: ports.http)
            #expect(stats.eventStreams == 0, "nothing subscribed")
            let malformed = try await Self.send("HEAD", "/v1/presence/events?jid=a%20b@x", port: ports.http)
            #expect(malformed.status == 400, "the GET's refusal, without its body")
        }
    }

    @Test func optionsSaysWhichMethodsAndAnyOtherIsRefusedWithAllow() async throws {
        try await withService { ports in
            for path in Self.paths {
                let options = try await Self.send("OPTIONS", path, port: ports.http)
                #expect(options.status == 204 && options.headers["allow"] == "GET, HEAD, OPTIONS", "\(path)")
                for method in ["POST", "PUT", "DELETE", "PATCH", "TRACE"] {
                    let refused = try await Self.send(method, path, port: ports.http)
                    #expect(refused.status == 405, "\(method) \(path): \(refused)")
                    #expect(refused.headers["allow"] == "GET, HEAD, OPTIONS")
                    #expect(refused.body.contains("\"condition\":\"not-allowed\""))
                }
            }
        }
    }

    @Test func anUnknownPathIsNotFoundWhateverTheMethod() async throws {
        try await withService { ports in
            for method in ["GET", "HEAD", "DELETE", "OPTIONS"] {
                for path in ["/v2/presence", "/v1/presence/a@x/other", "/v1/statistics", "/v1/presence/"] {
                    let answer = try await Self.send(method, path, port: ports.http)
                    #expect(answer.status == 404, "\(method) \(path)")
                }
            }
        }
    }
}

/// A request head over the decoder's limits gets an error document like any other error.
@Suite("A request head too large to read is refused with a readable answer")
struct UnreadableRequestTests {
    @Test func aTargetOverTheLimitGetsA400ErrorDocument() async throws {
        try await withService { ports in
            let jids = Array(repeating: "jid=someone.with.a.long.name@engineering.example.com", count: 2_000)
            let answer = try await HTTPMethodTests.send(
                "GET", "/v1/presence?" + jids.joined(separator: "&"), port: ports.http)
            #expect(answer.status == 400)
            #expect(answer.headers["content-type"] == "application/json; charset=utf-8")
            #expect(answer.body.contains("\"condition\":\"bad-request\"") && answer.body.contains("over the limit"))
            // The service goes on answering others.
            #expect(try await HTTPMethodTests.send("GET", "/healthz", port: ports.http).status == 200)
        }
    }
}
