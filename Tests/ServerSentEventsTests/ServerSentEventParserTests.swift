import NIOCore
import ServerSentEvents
import Testing

@Suite("Server-Sent Events: the parser and the sequence of events")
struct ServerSentEventParserTests {
    private static func events(_ text: String, cutEvery size: Int) throws -> [ServerSentEvent] {
        var parser = ServerSentEventParser()
        let bytes = Array(text.utf8)
        return try stride(from: 0, to: bytes.count, by: size).flatMap {
            try parser.parse(bytes[$0 ..< min($0 + size, bytes.count)])
        }
    }

    @Test(arguments: [1, 2, 3, 7, 1000])
    func fieldsCommentsAndLineEndingsGiveTheSameEventsHoweverTheBytesAreCut(size: Int) throws {
        let text =
            "\u{FEFF}: heartbeat\r\nretry: 1500\r\n\r\nid: s1:1\nevent: presence\ndata: {\"a\":1}\n\n"
            + "data:first\rdata: second\r\rid: 7\r\nevent: presence\r\ndata:  two spaces\r\n\r\n"
        #expect(
            try Self.events(text, cutEvery: size) == [
                ServerSentEvent(id: "s1:1", name: "presence", data: "{\"a\":1}"),
                ServerSentEvent(id: "s1:1", name: "message", data: "first\nsecond"),
                ServerSentEvent(id: "7", name: "presence", data: " two spaces"),
            ])
    }

    @Test func retryIsKeptOnlyWhenItIsDigitsAndAnEventWithoutDataIsDropped() throws {
        var parser = ServerSentEventParser()
        #expect(try parser.parse(Array("retry: 1200\n\nevent: ping\n\n".utf8)).isEmpty)
        #expect(parser.retry == .milliseconds(1200))
        _ = try parser.parse(Array("retry: soon\n\n".utf8))
        #expect(parser.retry == .milliseconds(1200))
        #expect(try parser.parse(Array("id\ndata\n\n".utf8)) == [ServerSentEvent(id: nil, data: "")])
        #expect(try parser.parse(Array("data: cut short".utf8)).isEmpty, "no blank line yet: nothing dispatched")
    }

    @Test func anEventLargerThanTheLimitIsRefusedAndOneAtTheLimitRead() throws {
        var parser = ServerSentEventParser(maximumEventBytes: 16)
        // "data: 0123456789" is 16 bytes: at the limit.
        #expect(try parser.parse(Array("data: 0123456789\n\n".utf8)) == [ServerSentEvent(id: nil, data: "0123456789")])
        // Two lines of 11 bytes: the event is 22, over it, though each line is under.
        #expect(throws: ServerSentEventParser.EventTooLarge(limit: 16)) {
            try parser.parse(Array("data: 01234\ndata: 56789\n".utf8))
        }
        // A line that never ends is refused as it grows, not held.
        var endless = ServerSentEventParser(maximumEventBytes: 1024)
        #expect(throws: ServerSentEventParser.EventTooLarge(limit: 1024)) {
            for _ in 0 ..< 100 { _ = try endless.parse(Array(repeating: UInt8(ascii: "x"), count: 100)) }
        }
    }

    @Test func theSequenceReadsEventsFromBuffersAndEndsWithTheBody() async throws {
        let chunks = ["id: 1\nevent: presence\nda", "ta: x\n", "\n: hb\n\ndata: y\n\ndata: lost"]
        let body = AsyncStream<ByteBuffer> { continuation in
            for chunk in chunks { continuation.yield(ByteBuffer(string: chunk)) }
            continuation.finish()
        }
        var seen: [ServerSentEvent] = []
        for try await event in body.serverSentEvents { seen.append(event) }
        #expect(seen == [ServerSentEvent(id: "1", name: "presence", data: "x"), ServerSentEvent(id: "1", data: "y")])
    }
}
