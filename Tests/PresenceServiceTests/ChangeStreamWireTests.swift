import Foundation
import PresenceService
import PresenceStore
import PresenceTestSupport
import PresenceWire
import ServerSentEvents
import Testing

/// The change stream on the wire and at its limits: framing per HTTP version, the end at a stop, losses, the
/// LRU's pins, a stalled reader, the caps, and the badge beside it.
extension ChangeStreamTests {
    @Test func aStreamIsFramedForItsHTTPVersionAndEndsCleanlyWhenTheServiceStops() async throws {
        // Each response read whole over a plain socket: what a reader gets before the stop, then until the close.
        // Between them, a change each stream writes alone (the event every stream shares, as it is or unframed),
        // then two changes fed at once (written in one piece, or one after the other: framed either way).
        let responses = Locked<[String: Task<(text: String, closedByService: Bool), any Error>]>([:])
        let before = Locked<[String: String]>([:])
        try await withService { ports in
            try await feedAliceAndBob(ports)
            var clients: [(version: String, client: Feeder)] = []
            for version in ["1.1", "1.0"] {
                let client = try await Feeder.connect(port: ports.http)
                try await client.send(
                    "GET /v1/presence/events?jid=alice@example.com&jid=bob@example.com HTTP/\(version)\r\n"
                        + "Host: 127.0.0.1\r\n\r\n")
                let start = try await client.read(until: "bob@example.com")
                before.withLock { $0[version] = start }
                clients.append((version, client))
            }
            let feeder = try await Feeder.connect(port: ports.feed)
            defer { feeder.close() }
            try await feeder.send("<presence from='alice@example.com/desk'><status>Alone</status></presence>")
            for (version, client) in clients {
                let alone = try await client.read(until: "Alone")
                before.withLock { $0[version, default: ""] += alone }
            }
            try await feeder.send(
                "<presence from='bob@example.com/desk'><status>Together</status></presence>"
                    + "<presence from='alice@example.com/desk'><status>Both</status></presence>")
            for (version, client) in clients {
                // Written in the order they happened: alice's is the last.
                let together = try await client.read(until: "Both")
                before.withLock { $0[version, default: ""] += together }
                responses.withLock {
                    $0[version] = Task { try await client.readUntilClosed(within: TestDeadline.serverCycle) }
                }
            }
        }
        for version in ["1.1", "1.0"] {
            let rest = try await #require(responses.withLock { $0[version] }).value
            #expect(rest.closedByService, "HTTP/\(version): the service closes the stream's connection when it stops")
            let response = (before.withLock { $0[version] } ?? "") + rest.text
            let parts = response.components(separatedBy: "\r\n\r\n")
            let (head, body) = (parts[0], parts.dropFirst().joined(separator: "\r\n\r\n"))
            #expect(head.hasPrefix("HTTP/\(version) 200 OK\r\n"), "\(head)")
            let events: String
            if version == "1.1" {
                #expect(head.lowercased().contains("transfer-encoding: chunked"), "\(head)")
                let (decoded, ended) = try Self.dechunk(body)
                #expect(ended, "HTTP/1.1: the body ends with its last chunk before the close")
                events = decoded
            } else {
                #expect(
                    head.contains("Connection: close") && !head.lowercased().contains("transfer-encoding"), "\(head)")
                #expect(body.hasPrefix("retry: "), "HTTP/1.0: the body as it is, unframed: \(body.prefix(40))")
                let foreign = body.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
                    !(line.isEmpty || ["id: ", "event: ", "data: ", "retry: ", ": "].contains { line.hasPrefix($0) })
                }
                #expect(foreign.isEmpty, "HTTP/1.0: nothing but events in the body: \(foreign)")
                events = body
            }
            var parser = ServerSentEventParser()
            let answers = try parser.parse(Array(events.utf8)).filter { $0.name == "presence" }.map {
                try JSONDecoder().decode(PresenceQueryResult.self, from: Data($0.data.utf8))
            }
            #expect(
                answers.map(\.jid) == [
                    "alice@example.com", "bob@example.com", "alice@example.com", "bob@example.com", "alice@example.com",
                ], "HTTP/\(version)")
            #expect(
                answers.map(\.status) == ["Quote \" and \\ back", nil, "Alone", "Together", "Both"],
                "HTTP/\(version)")
        }
    }

    /// A chunked body undone strictly (RFC 9112 §7.1): every chunk's size line, data and CRLF; and whether the
    /// last chunk ends it.
    private static func dechunk(_ body: String) throws -> (data: String, ended: Bool) {
        var rest = Substring(body)
        var data = ""
        while let lineEnd = rest.range(of: "\r\n") {
            guard let size = Int(rest[..<lineEnd.lowerBound], radix: 16) else {
                throw TestFailure("not a chunk size line: \(rest.prefix(20))")
            }
            rest = rest[lineEnd.upperBound...]
            if size == 0 { return (data, rest == "\r\n") }
            let bytes = Array(rest.utf8)
            guard bytes.count >= size + 2, bytes[size] == 13, bytes[size + 1] == 10 else {
                throw TestFailure("a chunk of \(size) bytes not followed by CRLF")
            }
            data += String(decoding: bytes[..<size], as: UTF8.self)
            rest = Substring(String(decoding: bytes[(size + 2)...], as: UTF8.self))
        }
        return (data, false)
    }

    @Test func lossesAreChangesAndTheUnfilteredStreamSeesEveryone() async throws {
        try await withService(storage: LRUMemoryStorage(countLimit: 1)) { ports in
            let feeder = try await Feeder.connect(port: ports.feed)
            defer { feeder.close() }
            try await feeder.send(Self.header + "<presence from='alice@example.com/desk'/>")
            #expect(
                try await eventually { try await state(of: "alice@example.com", port: ports.http)?.state == .available }
            )
            let everything = try await EventClient.open("", port: ports.http)
            defer { everything.close() }
            #expect(try await everything.nextAnswer().result.jid == "alice@example.com", "the snapshot holds everyone")
            try await feeder.send("<presence from='bob@example.com/desk'/>")
            var answers: [String: PresenceQueryResult] = [:]
            while answers.count < 2 {
                let answer = try await everything.nextAnswer().result
                answers[answer.jid] = answer
            }
            #expect(answers["alice@example.com"]?.state == .lost)
            #expect(answers["alice@example.com"]?.cause == .countLimit)
            #expect(answers["bob@example.com"]?.state == .available)
        }
    }

    @Test func anLRUKeepsTheUsersAStreamWatchesAndLetsThemGoWhenItCloses() async throws {
        // A reader that half-closes is noticed at the next write: the heartbeat, made short here.
        try await withService(
            storage: LRUMemoryStorage(countLimit: 1), configure: { $0.events.heartbeat = .milliseconds(300) }
        ) { ports in
            // A plain socket: the stream stays open however long the checks below take, unread.
            let stream = try await RawEventStream.open("?jid=alice@example.com", port: ports.http)
            _ = try await stream.nextAnswer()
            let feeder = try await Feeder.connect(port: ports.feed)
            defer { feeder.close() }
            try await feeder.send(
                Self.header + "<presence from='alice@example.com/desk'/><presence from='bob@example.com/desk'/>"
                    + "<presence from='carol@example.com/desk'/>")
            #expect(
                try await eventually {
                    try await get(ServiceStats.self, "/v1/stats", port: ports.http).updatesApplied == 3
                })
            #expect(try await state(of: "alice@example.com", port: ports.http)?.state == .available, "on screen")
            #expect(try await state(of: "bob@example.com", port: ports.http)?.state == .lost)
            let stats = try await get(ServiceStats.self, "/v1/stats", port: ports.http)
            #expect(stats.pinned == 1 && stats.eventStreams == 1)
            #expect(stats.entries == 1, "a pinned user takes its place within the limit first")
            stream.close()
            #expect(
                try await eventually { try await get(ServiceStats.self, "/v1/stats", port: ports.http).pinned == 0 })
            let carol = try await state(of: "carol@example.com", port: ports.http)
            #expect(carol?.state == .lost, "carol came while alice was pinned and had no room")
        }
    }

    @Test func aReaderThatStopsReadingIsClosedAfterTheWriteTimeoutAndTheServiceCarriesOn() async throws {
        try await withService(configure: { $0.events.writeTimeout = .seconds(1) }) { ports in
            // A reader of 200 people that never reads again: the service's writes block once the socket buffers
            // are full. Each burst changes 20 different people, so nothing coalesces and every byte is written.
            // The next burst waits until the service has applied the last one: the feed never runs ahead of the
            // service, so however loaded the machine, the stream's writes are what stalls and nothing else.
            let people = (0 ..< 200).map { "u\($0)@example.com" }
            let stalled = try await RawEventStream.open(
                "?" + people.map { "jid=\($0)" }.joined(separator: "&"), port: ports.http)
            defer { stalled.close() }
            _ = try await stalled.nextAnswer()
            let feeder = try await Feeder.connect(port: ports.feed)
            defer { feeder.close() }
            try await feeder.send(Self.header)
            let padding = String(repeating: "y", count: 100_000)
            var sent = 0
            // However long a loaded machine takes (the whole suite runs beside it in CI), the stream must be closed
            // once its writes stay blocked: the deadline bounds the test, not the service.
            let closed = try await eventually(timeout: TestDeadline.serverCycle) {
                var burst = ""
                for _ in 0 ..< 20 {
                    burst +=
                        "<presence from='\(people[sent % people.count])/desk'><status>\(sent) \(padding)</status></presence>"
                    sent += 1
                }
                try await feeder.send(burst)
                let applied = try await eventually(timeout: TestDeadline.serverCycle) {
                    try await get(ServiceStats.self, "/v1/stats", port: ports.http).updatesApplied == sent
                }
                try #require(applied, "the service keeps applying the feed while a stream is stalled")
                return try await get(ServiceStats.self, "/v1/stats", port: ports.http).eventStreamsClosedAsStalled == 1
            }
            let stats = try await get(ServiceStats.self, "/v1/stats", port: ports.http)
            #expect(
                closed,
                "after \(sent) changes of 100 KB: \(stats.eventStreams) streams open, \(stats.updatesApplied) applied")
            #expect(stats.eventStreams == 0, "the stalled stream is gone")
            #expect(stats.updatesApplied == sent)
            let last = people[(sent - 1) % people.count]
            let fresh = try await EventClient.open("?jid=\(last)", port: ports.http)
            defer { fresh.close() }
            #expect(try await fresh.nextAnswer().result.status?.hasPrefix("\(sent - 1) ") == true, "others are served")
        }
    }

    @Test func theStreamAndJIDCapsAreEnforcedWithClearErrors() async throws {
        try await withService(configure: {
            $0.events = EventStreamConfiguration(maxJIDsPerStream: 2, maxStreams: 1)
        }) { ports in
            let tooMany = try await httpGet(
                "/v1/presence/events?jid=a@example.com&jid=b@example.com&jid=c@example.com", port: ports.http)
            #expect(tooMany.status == 400)
            #expect(String(decoding: tooMany.body, as: UTF8.self).contains("--events-max-jids"))
            let malformed = try await httpGet("/v1/presence/events?jid=not%20a%20jid@", port: ports.http)
            #expect(malformed.status == 400)
            let open = try await EventClient.open("?jid=a@example.com", port: ports.http)
            defer { open.close() }
            _ = try await open.nextAnswer()
            let second = try await httpGet("/v1/presence/events?jid=b@example.com", port: ports.http)
            #expect(second.status == 503)
            #expect(String(decoding: second.body, as: UTF8.self).contains("--events-max-streams"))
        }
    }

    @Test func aBadgeShowsTheStatusEscapedAndAnswers304WhileNothingChanged() async throws {
        try await withService { ports in
            let feeder = try await Feeder.connect(port: ports.feed)
            defer { feeder.close() }
            try await feeder.send(
                Self.header
                    + "<presence from='alice@example.com/desk'><show>dnd</show><status>Budget &lt;Q3&gt; &amp; more</status></presence>"
            )
            #expect(
                try await eventually { try await state(of: "alice@example.com", port: ports.http)?.state == .available }
            )
            let badge = try await httpGet("/v1/presence/alice@example.com/badge.svg", port: ports.http)
            #expect(badge.status == 200)
            #expect(badge.headers["content-type"]?.hasPrefix("image/svg+xml") == true)
            #expect(badge.headers["cache-control"] == "no-cache")
            let svg = String(decoding: badge.body, as: UTF8.self)
            #expect(svg.contains("Budget &lt;Q3&gt; &amp; more"))
            #expect(svg.contains("#d0312d"), "do-not-disturb red")
            let tag = try #require(badge.headers["etag"])
            let revalidated = try await TestHTTP.get(
                port: ports.http, path: "/v1/presence/alice@example.com/badge.svg", headers: ["If-None-Match": tag])
            #expect(revalidated.status == 304)
            let unknown = try await httpGet("/v1/presence/nobody@example.com/badge.svg", port: ports.http)
            #expect(String(decoding: unknown.body, as: UTF8.self).contains(">unknown<"))
        }
    }
}
