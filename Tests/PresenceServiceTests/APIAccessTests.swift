import Foundation
import PresenceTestSupport
import PresenceService
import PresenceWire
import Testing

@Suite("API tokens: nobody reads presence without one when the service requires them")
struct APIAccessTests {
    static let token = "tok-0123456789abcdef+/="
    static let tokenFile = """
        # the dashboards' tokens
        \(token) wallboard

        another-token-0123456789 spare
        """

    static func withTokens(metricsOpen: Bool = false) throws -> APIAccess {
        try APIAccess(tokenFile: tokenFile, metricsOpen: metricsOpen)
    }

    static func get(
        _ path: String, port: Int, headers: [String: String] = [:]
    ) async throws
        -> TestHTTP.Response
    {
        try await TestHTTP.get(port: port, path: path, headers: headers)
    }

    /// Sends alice's presence and waits until a query with the token sees it.
    static func feedAlice(_ ports: PresenceServer.BoundPorts) async throws {
        let feeder = try await Feeder.connect(port: ports.feed)
        try await feeder.send(
            "<presence from='alice@example.com/desk'><show>away</show><status>Lunch</status></presence>")
        for _ in 0 ..< 200 {
            let response = try await get("/v1/stats", port: ports.http, headers: ["Authorization": "Bearer \(token)"])
            if String(decoding: response.body, as: UTF8.self).contains("\"updatesApplied\":1") { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        feeder.close()
    }

    @Test func withoutAValidTokenEveryDataPathIsRefusedAlikeAndWithOneItIsAnswered() async throws {
        let access = try Self.withTokens()
        try await withService(configure: { $0.access = access }) { ports in
            try await Self.feedAlice(ports)
            let paths = [
                "/v1/presence/alice@example.com",  // answered before the router when granted
                "/v1/presence?jid=alice@example.com&jid=bob@example.com",
                "/v1/presence/alice@example.com/badge.svg", "/v1/stats", "/metrics",
            ]
            var refusals: Set<[UInt8]> = []
            for path in paths {
                for headers in [
                    [:], ["Authorization": "Bearer wrong-token-0123456789"], ["Authorization": "Basic \(Self.token)"],
                    ["Cookie": "presence_token=nearly-\(Self.token)"],
                ] {
                    let refused = try await Self.get(path, port: ports.http, headers: headers)
                    #expect(refused.status == 401, "\(path) with \(headers)")
                    #expect(refused.headers["www-authenticate"] == "Bearer realm=\"presence\"", "\(path)")
                    #expect(!String(decoding: refused.body, as: UTF8.self).contains("alice"))
                    refusals.insert(refused.body)
                }
                let granted = try await Self.get(
                    path, port: ports.http, headers: ["Authorization": "bearer  \(Self.token)"])
                #expect(granted.status == 200, "\(path)")
            }
            #expect(refusals.count == 1, "the same answer whether the token was missing, wrong or of another scheme")
            let answer = try await Self.get(
                "/v1/presence/alice@example.com", port: ports.http, headers: ["Authorization": "Bearer \(Self.token)"])
            let document = try JSONDecoder().decode(QueryDocument.self, from: Data(answer.body))
            #expect(document.results.first?.state == .available && document.results.first?.status == "Lunch")
        }
    }

    @Test func theHealthCheckAndThePagesOwnFilesStayOpenAndMetricsOpensOnlyWhenAsked() async throws {
        let closed = try Self.withTokens()
        try await withService(configure: { $0.access = closed }) { ports in
            for path in ["/healthz", "/", "/people.js", "/people.css"] {
                let status = try await Self.get(path, port: ports.http).status
                #expect(status == 200, "\(path)")
            }
            let metrics = try await Self.get("/metrics", port: ports.http).status
            #expect(metrics == 401)
        }
        let metricsOpen = try Self.withTokens(metricsOpen: true)
        try await withService(configure: { $0.access = metricsOpen }) { ports in
            let metrics = try await Self.get("/metrics", port: ports.http).status
            let stats = try await Self.get("/v1/stats", port: ports.http).status
            #expect(metrics == 200 && stats == 401)
        }
    }

    @Test func aBrowserPresentsItsTokenAsACookieForTheChangeStreamToo() async throws {
        let access = try Self.withTokens()
        try await withService(configure: { $0.access = access }) { ports in
            try await Self.feedAlice(ports)
            // As the page sets it: encodeURIComponent, among other cookies.
            let cookie =
                "theme=dark; presence_token="
                + Self.token.replacingOccurrences(of: "+", with: "%2B")
                .replacingOccurrences(of: "/", with: "%2F").replacingOccurrences(of: "=", with: "%3D")
            let answer = try await Self.get(
                "/v1/presence/alice@example.com", port: ports.http, headers: ["Cookie": cookie])
            #expect(answer.status == 200)
            let port = ports.http
            let (status, firstEvent) = try await { () async throws -> (Int, String?) in
                let reader = try await TestEventStream(
                    host: "127.0.0.1", port: port, path: "/v1/presence/events?jid=alice@example.com",
                    headers: ["Cookie": cookie], idleTimeout: .seconds(10))
                defer { reader.close() }
                guard reader.status == 200 else { return (reader.status, nil) }
                while let event = try await reader.next() {
                    if event.name == "presence" { return (200, event.data) }
                }
                return (200, nil)
            }()
            #expect(status == 200)
            #expect(firstEvent?.contains("Lunch") == true, "the snapshot of alice")
            let refused = try await TestEventStream(
                host: "127.0.0.1", port: port, path: "/v1/presence/events", idleTimeout: .seconds(10)
            ).status
            #expect(refused == 401)
        }
    }

    @Test func aTokenFileIsReadWithNamesAndCommentsAndABadOneSaysWhereWithoutQuotingIt() throws {
        let access = try Self.withTokens()
        #expect(access.tokenCount == 2 && access.requiresToken)
        #expect(
            access.authenticate(authorization: ["Bearer another-token-0123456789"], cookies: [String]())
                == .granted(name: "spare"))
        #expect(access.authenticate(authorization: ["Bearer another-token-012345678"], cookies: [String]()) == .denied)
        #expect(!APIAccess.open.requiresToken)
        for (file, line, reason): (String, Int?, String) in [
            ("# only a comment\n", nil, "no token"), ("good-token-0123456789\nshort-secret\n", 2, "at least 16"),
            ("\n\nwith space in it\"0123456789abcdef\n", 3, "at least 16"),
            ("token-with-a-quote\"-0123456789\n", 1, "letters, digits"),
        ] {
            do throws(APIAccess.TokenFileError) {
                _ = try APIAccess(tokenFile: file)
                Issue.record("\(file) was accepted")
            } catch {
                #expect(error.line == line, "\(file)")
                #expect(error.description.contains(reason), "\(error)")
                #expect(!error.description.contains("secret") && !error.description.contains("quote"))
            }
        }
    }
}
