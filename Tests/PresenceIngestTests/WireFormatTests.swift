import Foundation
import PresenceIngest
import PresenceStore
import PresenceTestSupport
import PresenceWire
import Testing
import XMPPStream

@Suite("The wire format: one writer per document, valid JSON that reads back the same")
struct WireFormatTests {
    static func results() -> [PresenceQueryResult] {
        var presence = UserPresence()
        presence.apply(
            available(
                "a@example.com/desk \"quoted\"", priority: -3, show: .dnd, status: "Line\nbreak \\ tab\t \u{1} é ✓",
                attendance: .businessTrip), receivedAt: time(1))
        var offline = UserPresence()
        offline.apply(unavailable("b@example.com", status: "Gone", attendance: .vacation), receivedAt: time(2))
        return [
            PresenceQueryResult(jid: jid("a@example.com"), stored: .present(presence)),
            PresenceQueryResult(jid: jid("b@example.com"), stored: .present(offline)),
            PresenceQueryResult(jid: jid("c@example.com"), stored: .lost(.countLimit)),
            PresenceQueryResult(jid: jid("d@example.com"), stored: .lost(nil)),
            PresenceQueryResult(jid: jid("e@example.com"), stored: .unknown),
            PresenceQueryResult(
                LookupAnswer(jid: jid("f@example.com"), stored: .present(offline), origin: .probe), live: true),
            PresenceQueryResult(
                LookupAnswer(
                    jid: jid("g@example.com"), stored: .lost(.pressure), origin: .none, probeFailure: .rateLimited),
                live: false),
        ]
    }

    @Test(arguments: [false, true])
    func queryDocumentsReadBackAsTheSameResults(pretty: Bool) throws {
        let document = QueryDocument(results: WireFormatTests.results())
        let bytes = document.jsonBytes(pretty: pretty)
        #expect(try JSONDecoder().decode(QueryDocument.self, from: Data(bytes)) == document)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(object["error"] is NSNull, "a field with no value is null, never left out")
        let first = try #require((object["results"] as? [[String: Any]])?.first)
        #expect(
            first.keys.sorted() == [
                "asOf", "attendance", "cause", "jid", "live", "origin", "partial", "priority", "probeFailure", "resource",
                "show", "since", "state", "status",
            ])
        #expect(first["live"] is NSNull, "without an XMPP source nobody claims the answer is live")
        #expect(first["origin"] as? String == "storage")
        #expect(first["probeFailure"] is NSNull)
        #expect(
            first["status"] as? String == "Line\nbreak \\ tab\t \u{1} é ✓", "control characters and quotes are escaped")
        #expect(first["state"] as? String == "available")
        #expect(first["show"] as? String == "dnd")
    }

    @Test func statsWithAnXMPPSourceReadBackTheSameAndWithoutOneSayNull() throws {
        let source = SourceReport(
            kind: "xmpp", jid: "watcher@corp.example", server: "xmpp.corp.example:5222", connected: false, live: false,
            encrypted: true, connectedSince: nil, disconnectedSince: "2026-11-23T12:00:00.000Z", connectAttempts: 7,
            reconnects: 2, rosterSize: 1200, presencesReceived: 48_000, markedOffline: 300,
            lastSnapshotMilliseconds: 61.5, lastError: "the server closed the connection")
        var stats = ServiceStats(
            storage: "lru", entries: 1, storageEstimatedBytes: 100, lost: 0, removals: [:], evictions: [:],
            pressureLevel: "normal", pressureEvents: [], residentBytes: nil, peakResidentBytes: nil,
            feedersConnected: 0,
            connectionsAccepted: 0, stanzasRead: 0, updatesApplied: 0, stanzasIgnored: 0, presencesRejected: 0,
            streamErrors: 0, source: source)
        #expect(try JSONDecoder().decode(ServiceStats.self, from: Data(stats.jsonBytes())) == stats)
        var probeStatistics = ProbeStatistics()
        probeStatistics.sent = 12
        probeStatistics.answered = 11
        probeStatistics.timedOut = 1
        probeStatistics.latency.record(.microseconds(700))
        stats.probes = ProbeReport(probeStatistics, defaultPolicy: .cacheElseProbe, configuration: .init())
        #expect(stats.probes?.latencyP50Milliseconds == 1, "the upper bound of the bucket holding 0.7 ms")
        #expect(try JSONDecoder().decode(ServiceStats.self, from: Data(stats.jsonBytes())) == stats)
        stats.source = nil
        stats.probes = nil
        let object = try #require(try JSONSerialization.jsonObject(with: Data(stats.jsonBytes())) as? [String: Any])
        #expect(object["source"] is NSNull)
        #expect(object["probes"] is NSNull)
    }

    @Test func everyStateIsOneOfFourWordsAndLostSaysWhy() {
        #expect(
            WireFormatTests.results().map(\.state) == [.available, .offline, .lost, .lost, .unknown, .offline, .lost])
        #expect(WireFormatTests.results().map(\.cause) == [nil, nil, .countLimit, nil, nil, nil, .pressure])
        #expect(
            WireFormatTests.results().map(\.origin) == [.storage, .storage, .none, .none, .none, .probe, .none])
        #expect(WireFormatTests.results().last?.probeFailure == .rateLimited)
        #expect(PresenceState.allCases.map(\.rawValue) == ["available", "offline", "unknown", "lost"])
    }

    @Test func errorsHaveTheDocumentedShapeWithOrWithoutAPosition() throws {
        let parser = XMPPStreamParser()
        var streamError: XMPPStreamError?
        do {
            try parser.feed(Array("<presence from='a@example.com'><".utf8)) { _ in }; try parser.finish { _ in }
        } catch { streamError = error }
        let report = ErrorReport(try #require(streamError))
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(ErrorDocument(report).jsonBytes())) as? [String: [String: Any]])
        #expect(document["error"]?.keys.sorted() == ["byteOffset", "column", "condition", "line", "message"])
        #expect(document["error"]?["condition"] as? String == "not-well-formed")
        #expect(document["error"]?["line"] as? Int == 1)
        let request = ErrorDocument(ErrorReport(condition: "jid-malformed", message: "'@' is not a valid JID"))
        let body = String(decoding: request.jsonBytes(), as: UTF8.self)
        #expect(
            body
                == #"{"error":{"byteOffset":null,"column":null,"condition":"jid-malformed","line":null,"message":"'@' is not a valid JID"}}"#
        )
    }

    @Test func prettyAndCompactAreTheSameDocument() throws {
        var writer = JSONWriter(pretty: true)
        writer.object { writer in
            writer.key("empty"); writer.object { _ in }
            writer.key("list"); writer.strings(["a", "b"])
            writer.key("none"); writer.strings([])
            writer.key("ratio"); writer.double(0.25)
        }
        let pretty = String(decoding: writer.bytes, as: UTF8.self)
        #expect(
            pretty
                == "{\n  \"empty\": {},\n  \"list\": [\n    \"a\",\n    \"b\"\n  ],\n  \"none\": [],\n  \"ratio\": 0.25\n}"
        )
        var compact = JSONWriter()
        compact.object { writer in
            writer.key("empty"); writer.object { _ in }
            writer.key("list"); writer.strings(["a", "b"])
            writer.key("none"); writer.strings([])
            writer.key("ratio"); writer.double(0.25)
        }
        #expect(
            String(decoding: compact.bytes, as: UTF8.self) == #"{"empty":{},"list":["a","b"],"none":[],"ratio":0.25}"#)
    }

    @Test func integersAndStringsAreWrittenAsJSONEncoderWritesThem() throws {
        let numbers = [0, 7, 9, 10, 99, 100, 101, 12_345, 1_000_000, -1, -128, Int.max, Int.min]
        let strings = ["", "plain", "quote \" and \\ back", "tab\tnew\nline\r", "\u{1}\u{1f}", "Grüße, 日本"]
        var writer = JSONWriter()
        writer.object { writer in
            writer.key("numbers"); writer.array(numbers) { writer, number in writer.int(number) }
            writer.key("strings"); writer.strings(strings)
        }
        struct Expected: Codable { var numbers: [Int]; var strings: [String] }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let expected = try encoder.encode(Expected(numbers: numbers, strings: strings))
        #expect(String(decoding: writer.bytes, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
    }

    @Test func everyStringIsEscapedAsJSONEncoderEscapesItWhereverTheSpecialBytesFall() throws {
        // The escape scan reads eight bytes at a time: special bytes at every offset, in strings of every length
        // around a word's size, with multi-byte characters in between.
        let pieces = ["a", "Z", "0", " ", "\"", "\\", "\n", "\t", "\u{1}", "\u{1f}", "\u{7f}", "é", "日", "🙂", "/"]
        var generator = SystemRandomNumberGenerator()
        var strings: [String] = []
        for _ in 0 ..< 3000 {
            let length = Int.random(in: 0 ... 40, using: &generator)
            let plain = Bool.random(using: &generator)
            strings.append(
                String((0 ..< length).map { _ in plain ? "x" : pieces.randomElement(using: &generator)! }.joined()))
            if plain, length > 0 {
                // One special byte at a random place in an otherwise plain string.
                var characters = Array(strings.removeLast())
                characters[Int.random(in: 0 ..< length, using: &generator)] = ["\"", "\\", "\u{0}", "\u{1f}"]
                    .randomElement(using: &generator)!
                strings.append(String(characters))
            }
        }
        var writer = JSONWriter()
        writer.strings(strings)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        #expect(
            String(decoding: writer.bytes, as: UTF8.self)
                == String(decoding: try encoder.encode(strings), as: UTF8.self))
    }
}
