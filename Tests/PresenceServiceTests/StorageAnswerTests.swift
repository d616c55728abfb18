import Foundation
import PresenceStore
import PresenceTestSupport
import PresenceWire
import Testing

@testable import PresenceService

/// Storage hits are answered on the event loop, ahead of the router (`StorageAnswerHandler`); these hold that path to
/// what the router answers and to HTTP/1.1's rules.
@Suite("Queries the storage answers skip the router and still obey HTTP", .serialized)
struct StorageAnswerTests {
    /// The bodies of the HTTP/1.1 responses in `text`, in order.
    private func bodies(_ text: String) -> [String] {
        var bodies: [String] = []
        var rest = Substring(text)
        while let headEnd = rest.range(of: "\r\n\r\n") {
            let head = rest[..<headEnd.lowerBound].lowercased()
            let length =
                head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
            let bodyStart = headEnd.upperBound
            let bodyEnd = rest.utf8.index(bodyStart, offsetBy: length)
            bodies.append(String(rest[bodyStart ..< bodyEnd]))
            rest = rest[bodyEnd...]
        }
        return bodies
    }

    /// GETs `targets` pipelined on one connection, the last with `Connection: close`; the bodies, and whether the
    /// service closed the connection after them.
    private func pipelined(_ targets: [String], port: Int) async throws -> (bodies: [String], closed: Bool) {
        let client = try await Feeder.connect(port: port)
        defer { client.close() }
        try await client.send(
            targets.enumerated().map { index, target in
                "GET \(target) HTTP/1.1\r\nHost: x\r\n" + (index == targets.count - 1 ? "Connection: close\r\n" : "")
                    + "\r\n"
            }.joined())
        let (text, closed) = try await client.readUntilClosed()
        return (bodies(text), closed)
    }

    @Test func pipelinedRequestsAreAnsweredInOrderWhicheverPathAnswersThem() async throws {
        try await withService { ports in
            try await feedAliceAndBob(ports)
            // The first goes to the router; the second would be a storage hit, but must not overtake it.
            let (answers, closed) = try await pipelined(
                [
                    "/v1/stats", "/v1/presence/alice@example.com", "/healthz",
                    "/v1/presence?jid=bob%40example.com&jid=nobody@example.com",
                ], port: ports.http)
            #expect(closed, "Connection: close on the last request closes the connection after its answer")
            try #require(answers.count == 4, "\(answers)")
            #expect(answers[0].contains("\"storage\":\"dictionary\""), "the statistics first")
            let alice = try JSONDecoder().decode(QueryDocument.self, from: Data(answers[1].utf8)).results
            #expect(alice.map(\.state) == [.available] && alice.first?.status == "Quote \" and \\ back")
            #expect(answers[2] == "ok\n")
            let others = try JSONDecoder().decode(QueryDocument.self, from: Data(answers[3].utf8)).results
            #expect(others.map(\.state) == [.offline, .unknown])
        }
    }

    @Test func aRefusedStreamPipelinedAfterARoutedRequestIsAnsweredInOrderAndSoAreTheRequestsAfterIt() async throws {
        try await withService { ports in
            // A stream's request is decided when its head arrives: refused, it is a request like any other, answered
            // in its turn, and the connection goes on to the next; only a stream that opens carries nothing else.
            let (answers, closed) = try await pipelined(
                ["/v1/stats", "/v1/presence/events?jid=not%20a%20jid@", "/v1/presence/alice@example.com"],
                port: ports.http)
            #expect(closed)
            try #require(answers.count == 3, "\(answers)")
            #expect(answers[0].contains("\"storage\":\"dictionary\""), "the statistics first")
            #expect(answers[1].contains("jid-malformed"))
            #expect(answers[2].contains("\"jid\":\"alice@example.com\""))
        }
    }

    @Test func aConnectionWhoseFirstRequestIsARefusedStreamGoesOnAnsweringItsNextRequests() async throws {
        try await withService { ports in
            // Refused, the stream's connection stays open for more, and requests for the router are answered on
            // it: only a stream that opened makes a connection carry nothing else.
            let client = try await Feeder.connect(port: ports.http)
            defer { client.close() }
            try await client.send("GET /v1/presence/events?jid=not%20a%20jid@ HTTP/1.1\r\nHost: x\r\n\r\n")
            try await Task.sleep(for: .milliseconds(500))
            try await client.send("GET /v1/stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let (text, closed) = try await client.readUntilClosed()
            #expect(closed)
            #expect(text.hasPrefix("HTTP/1.1 400 Bad Request\r\n") && text.contains("jid-malformed"), "\(text)")
            #expect(text.contains("\"storage\":\"dictionary\""), "the statistics after the refusal: \(text)")
        }
    }

    @Test func aStorageHitIsTheSameDocumentTheRouterWrites() async throws {
        try await withService { ports in
            try await feedAliceAndBob(ports)
            // Pipelined behind /v1/stats, the query goes to the router; alone, the storage answers it.
            let routed = try await pipelined(
                ["/v1/stats", "/v1/presence?jid=alice@example.com&jid=bob@example.com"], port: ports.http
            ).bodies[1]
            let direct = try await httpGet("/v1/presence?jid=alice@example.com&jid=bob@example.com", port: ports.http)
            #expect(String(decoding: direct.body, as: UTF8.self) == routed)
            #expect(direct.headers["content-type"] == "application/json; charset=utf-8")
            #expect(direct.headers["server"] == "presence" && direct.headers["date"]?.hasSuffix(" GMT") == true)
        }
    }

    @Test func anHTTP10RequestIsAnsweredAndTheConnectionClosed() async throws {
        try await withService { ports in
            try await feedAliceAndBob(ports)
            let client = try await Feeder.connect(port: ports.http)
            defer { client.close() }
            try await client.send("GET /v1/presence/alice@example.com HTTP/1.0\r\n\r\n")
            let (text, closed) = try await client.readUntilClosed()
            #expect(closed)
            #expect(text.hasPrefix("HTTP/1.0 200 OK\r\n"), "\(text)")
            #expect(text.lowercased().contains("connection: close"))
        }
    }

    @Test(arguments: [
        "/v1/presence/alice@example.com", "/v1/presence?jid=alice@example.com", "/v1/stats",
        "/v1/presence/alice@example.com/badge.svg", "/healthz", "/v1/presence/bad@@example.com", "/nowhere",
    ])
    func aRequestThatAsksToCloseGetsAnAnswerThatSaysSoOnEitherPath(path: String) async throws {
        try await withService { ports in
            let client = try await Feeder.connect(port: ports.http)
            defer { client.close() }
            try await client.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            let (text, closed) = try await client.readUntilClosed()
            #expect(closed, "\(path): the service closes")
            let head = text.components(separatedBy: "\r\n\r\n").first ?? ""
            #expect(head.lowercased().contains("\r\nconnection: close"), "\(path): the answer says so: \(head)")
        }
    }

    @Test func refusalsNameTheirReasonAndOtherRoutesStillComeFromTheRouter() async throws {
        try await withService { ports in
            let malformed = try await httpGet("/v1/presence/bad@@example.com", port: ports.http)
            #expect(malformed.status == 400)
            #expect(String(decoding: malformed.body, as: UTF8.self).contains("jid-malformed"))
            let policy = try await httpGet("/v1/presence/a@example.com?policy=sometimes", port: ports.http)
            #expect(policy.status == 400 && String(decoding: policy.body, as: UTF8.self).contains("unknown policy"))
            let probe = try await httpGet("/v1/presence/a@example.com?policy=probe", port: ports.http)
            #expect(probe.status == 409, "a probing policy without an XMPP source")
            // The same refusal when the storage holds the user and could have answered on its own.
            try await feedAliceAndBob(ports)
            for path in ["/v1/presence/alice@example.com", "/v1/presence?jid=alice@example.com&jid=bob@example.com"] {
                let held = try await httpGet(
                    path + (path.contains("?") ? "&" : "?") + "policy=cache-else-probe", port: ports.http)
                #expect(held.status == 409, "\(path): a probing policy without an XMPP source")
                #expect(String(decoding: held.body, as: UTF8.self).contains("needs an XMPP source"))
            }
            #expect(try await httpGet("/v1/presence/a@example.com/badge.svg", port: ports.http).status == 200)
        }
    }

    /// A target read as the front door reads it: by the route table, then as a query; nil for another route.
    private func parse(_ target: String) -> PresenceQueryTarget.Parsed? {
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        guard let route = ServiceRoute(path: path), route == .presence || route == .presenceBatch else { return nil }
        return PresenceQueryTarget.parse(pathJID: route.jidSegment(in: path), target: target)
    }

    /// The JIDs a target asks for; nil when it is malformed or another route's.
    private func jids(_ target: String) -> [String]? {
        guard case .query(let query) = parse(target) else { return nil }
        return query.jids.map(\.rawValue)
    }

    /// The error a malformed target gets; nil for a query or another route.
    private func malformed(_ target: String) -> ErrorReport? {
        guard case .malformed(let report) = parse(target) else { return nil }
        return report
    }

    @Test func requestTargetsAreDecodedOnceForBothPaths() throws {
        func condition(_ target: String) -> String? { malformed(target)?.condition }
        #expect(jids("/v1/presence/alice%40example.com") == ["alice@example.com"])
        #expect(jids("/v1/presence/a+b@example.com") == ["a+b@example.com"], "+ is not a space")
        #expect(
            parse("/v1/presence?jid=a@x&policy=cache-only&jid=b%40y&other=1")
                == .query(PresenceQueryTarget(jids: [try BareJID("a@x"), try BareJID("b@y")], policy: "cache-only")))
        #expect(jids("/v1/presence/a@x?jid=b@y") == ["a@x"], "the path's JID only")
        #expect(jids("/v1/presence?") == [])
        #expect(parse("/v1/presence/events") == nil, "the change stream's route")
        #expect(parse("/v1/presence/a@x/badge.svg") == nil)
        #expect(parse("/v1/presences/a@x") == nil)
        #expect(jids("/v1/presence/even%74s") == ["events"], "routes are matched before decoding")
        #expect(condition("/v1/presence?jid=a%4") == "jid-malformed", "a cut escape")
        #expect(condition("/v1/presence?jid=%ff%fe") == "jid-malformed", "not UTF-8")
        #expect(condition("/v1/presence?jid=a@x&policy=probe&policy=cache-only") == "bad-request")
        #expect(condition("/v1/presence?jid=a@x&policy=%zz") == "bad-request")
    }

    @Test func requestTargetJIDsAreNormalisedAndMalformedOnesNamed() {
        func message(_ target: String) -> String? { malformed(target)?.message }
        #expect(jids("/v1/presence/Alice@Example.COM") == ["alice@example.com"], "case-folded like the storage's keys")
        #expect(jids("/v1/presence?jid=B%C3%B6b@Example.com/Phone") == ["böb@example.com"], "a full JID's bare JID")
        #expect(message("/v1/presence/%40example.com")?.hasPrefix("'@example.com' is not a valid JID") == true)
        #expect(message("/v1/presence?jid=a@x&jid=")?.hasPrefix("'' is not a valid JID") == true)
        #expect(message("/v1/presence?jid=a%20b@x")?.hasPrefix("'a b@x' is not a valid JID") == true)
        #expect(message("/v1/presence/events%2F")?.hasPrefix("'events/' is not a valid JID") == true)
    }
}
