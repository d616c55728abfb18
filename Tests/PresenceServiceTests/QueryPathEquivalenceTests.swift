import Foundation
import Logging
import PresenceModel
import PresenceService
import PresenceSource
import PresenceStore
import PresenceTestSupport
import Testing
import XMPPClient

/// A request is answered on the event loop when nothing needs an await, and by the router otherwise; both act on
/// the same decision (`FrontDoor`). These send each request both ways, alone (the event-loop path) and
/// pipelined behind `/healthz` (which holds the connection for the router, so the request follows it there), and
/// hold the two answers to the same status, header fields and bytes.
@Suite("A query gets the same answer whichever path serves it", .serialized)
struct QueryPathEquivalenceTests {
    /// One HTTP/1.1 response as it came off the wire.
    struct WireResponse: Equatable, CustomStringConvertible {
        var status: Int
        /// Lowercased names; `date` (it may tick between the two) and `connection` (the transport's: the event-loop
        /// path says `close` when it closes, Hummingbird closes without saying so) left out.
        var headers: [String: String]
        var body: String
        var description: String { "\(status) \(headers.sorted { $0.key < $1.key }) \(body)" }
    }

    /// The responses in `text`, in order; `bodiless` says which have no body whatever their `Content-Length` (the
    /// answers to HEAD).
    static func responses(_ text: String, bodiless: [Bool] = []) -> [WireResponse] {
        var responses: [WireResponse] = []
        var rest = Substring(text)
        while let headEnd = rest.range(of: "\r\n\r\n") {
            let lines = rest[..<headEnd.lowerBound].split(separator: "\r\n")
            let status = lines.first.flatMap { Int($0.split(separator: " ")[1]) } ?? 0
            var headers: [String: String] = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                let name = line[..<colon].lowercased()
                if name == "date" || name == "connection" { continue }
                headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            let length = bodiless.count > responses.count && bodiless[responses.count] ? 0 : Int(headers["content-length"] ?? "0") ?? 0
            let bodyEnd = rest.utf8.index(headEnd.upperBound, offsetBy: length)
            responses.append(WireResponse(status: status, headers: headers, body: String(rest[headEnd.upperBound ..< bodyEnd])))
            rest = rest[bodyEnd...]
        }
        return responses
    }

    /// `request` (a target and extra header lines) answered alone and answered behind a routed request.
    static func bothWays(_ target: String, method: String = "GET", headers: [String] = [], port: Int) async throws
        -> (eventLoop: WireResponse, router: WireResponse)
    {
        let extra = headers.map { $0 + "\r\n" }.joined()
        let request = "\(method) \(target) HTTP/1.1\r\nHost: x\r\n\(extra)Connection: close\r\n\r\n"
        let head = method == "HEAD"
        let alone = try await exchange(request, port: port, bodiless: [head])
        let behind = try await exchange(
            "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" + request, port: port, bodiless: [false, head])
        try #require(alone.count == 1 && behind.count == 2, "\(target): \(alone) / \(behind)")
        return (alone[0], behind[1])
    }

    private static func exchange(_ text: String, port: Int, bodiless: [Bool]) async throws -> [WireResponse] {
        let client = try await Feeder.connect(port: port)
        defer { client.close() }
        try await client.send(text)
        return responses(try await client.readUntilClosed().text, bodiless: bodiless)
    }

    /// Holds each target's two answers equal, and to the status the table expects; then the same for HEAD, whose
    /// answers are the GET's status and header fields with no body.
    static func check(_ table: [(target: String, headers: [String], status: Int)], port: Int) async throws {
        for row in table {
            let (eventLoop, router) = try await bothWays(row.target, headers: row.headers, port: port)
            #expect(eventLoop == router, "\(row.target) \(row.headers)")
            #expect(eventLoop.status == row.status, "\(row.target) \(row.headers): \(eventLoop)")
            let (headOnLoop, headRouted) = try await bothWays(
                row.target, method: "HEAD", headers: row.headers, port: port)
            #expect(headOnLoop == headRouted, "HEAD \(row.target) \(row.headers)")
            var bodiless = eventLoop
            bodiless.body = ""
            #expect(headOnLoop == bodiless, "HEAD \(row.target): the GET's status and fields, no body")
        }
    }

    @Test func everyKindOfQueryAndEveryRefusalIsAnsweredAlikeOnBothPaths() async throws {
        try await withService(configure: { $0.http.maxBatchJIDs = 3 }) { ports in
            try await feedAliceAndBob(ports)
            try await Self.check(
                [
                    ("/v1/presence/alice@example.com", [], 200),
                    ("/v1/presence/Alice@Example.COM%2Fphone", [], 200),
                    ("/v1/presence/alice%40example.com?policy=cache-only", [], 200),
                    ("/v1/presence?jid=alice@example.com&jid=bob@example.com&jid=nobody@example.com", [], 200),
                    ("/v1/presence?jid=B%C3%B6b@Example.com/Phone", [], 200),
                    ("/v1/presence/even%74s", [], 200),
                    ("/v1/presence/bad@@example.com", [], 400),
                    ("/v1/presence?jid=alice@example.com&jid=", [], 400),
                    ("/v1/presence?jid=a%4", [], 400),
                    ("/v1/presence?jid=%ff%fe", [], 400),
                    ("/v1/presence?jid=a%20b@x", [], 400),
                    ("/v1/presence", [], 400),
                    ("/v1/presence?", [], 400),
                    ("/v1/presence?jid=a@x&jid=b@x&jid=c@x&jid=d@x", [], 400),
                    ("/v1/presence/a@x?policy=sometimes", [], 400),
                    ("/v1/presence/alice@example.com?policy=probe", [], 409),
                    ("/v1/presence?jid=alice@example.com&policy=cache-else-probe", [], 409),
                    ("/v1/presence/a@x?policy=cache-only&policy=probe", [], 400),
                    ("/v1/presence/a@x?policy=%zz", [], 400),
                ], port: ports.http)
        }
    }

    @Test func streamsMethodsAndUnknownPathsAreDecidedAlikeOnBothPaths() async throws {
        try await withService(configure: { $0.events.maxJIDsPerStream = 2 }) { ports in
            // A stream's GET that is refused, and the HEAD of any stream's request: answered on the event loop when
            // alone, by the router behind a routed request.
            try await Self.check(
                [
                    ("/v1/presence/events?jid=a%20b@x", [], 400),
                    ("/v1/presence/events?jid=a@x&jid=b@x&jid=c@x", [], 400),
                    ("/v1/presence/events?snapshot=sometimes", [], 400),
                ], port: ports.http)
            for target in ["/v1/presence/events?jid=a@x", "/v1/presence/events"] {
                let (headOnLoop, headRouted) = try await Self.bothWays(target, method: "HEAD", port: ports.http)
                #expect(headOnLoop == headRouted && headOnLoop.status == 200, "HEAD \(target)")
                #expect(headOnLoop.headers["content-type"] == "text/event-stream; charset=utf-8")
            }
            // The method rules and paths the API does not serve.
            for (method, target, status) in [
                ("OPTIONS", "/v1/presence/a@x", 204), ("OPTIONS", "/v1/presence/events", 204),
                ("DELETE", "/v1/presence/a@x", 405), ("POST", "/v1/presence/events", 405), ("PUT", "/v1/stats", 405),
                ("GET", "/v2/presence", 404), ("DELETE", "/nowhere", 404), ("GET", "/v1/presence/", 404),
            ] {
                let (eventLoop, router) = try await Self.bothWays(target, method: method, port: ports.http)
                #expect(eventLoop == router, "\(method) \(target)")
                #expect(eventLoop.status == status, "\(method) \(target): \(eventLoop)")
            }
        }
    }

    @Test func aTokenIsCheckedAlikeOnBothPaths() async throws {
        let token = "tok-0123456789abcdef+/="
        let access = try APIAccess(tokenFile: "\(token) wallboard\n")
        try await withService(configure: { $0.access = access }) { ports in
            try await Self.check(
                [
                    ("/v1/presence/alice@example.com", [], 401),
                    ("/v1/presence/alice@example.com", ["Authorization: Bearer wrong-0123456789abcdef"], 401),
                    ("/v1/presence/bad@@example.com", [], 401),
                    ("/v1/presence/alice@example.com", ["Authorization: Bearer \(token)"], 200),
                    ("/v1/presence/alice@example.com", ["Cookie: \(APIAccess.cookieName)=\(token)"], 200),
                    ("/v1/presence/bad@@example.com", ["Authorization: bearer \(token)"], 400),
                ], port: ports.http)
        }
    }

    @Test func aReplicaThatIsNotReadyRefusesAlikeOnBothPaths() async throws {
        // A source whose server is not there (a port bound and not listening): the replica never becomes ready.
        let (nowhere, port) = LoopbackTCP.boundSocket(listening: false)
        defer { close(nowhere) }
        let source = XMPPPresenceSource(
            configuration: XMPPClientConfiguration(
                account: try BareJID("watcher@example.com"), password: "secret", resource: "presence",
                host: "127.0.0.1", port: port),
            storage: DictionaryMemoryStorage(), resync: nil, logger: Logger(label: "test.nowhere", factory: { _ in SwiftLogNoOpLogHandler() }))
        try await withService(xmppSource: source, configure: { $0.readiness.whenNotReady = .refuse }) { ports in
            // The reason settles once the first attempt to connect has failed: from then on both answers say it.
            #expect(
                try await eventually {
                    String(decoding: try await httpGet("/readyz", port: ports.http).body, as: UTF8.self)
                        .contains("cannot connect")
                })
            try await Self.check(
                [
                    ("/v1/presence/alice@example.com", [], 503),
                    ("/v1/presence?jid=alice@example.com&jid=bob@example.com", [], 503),
                    ("/v1/presence/bad@@example.com", [], 503),
                    ("/v1/presence/alice@example.com?policy=cache-only", [ReadinessConfiguration.acceptStaleHeader + ": 1"], 200),
                ], port: ports.http)
        }
    }
}
