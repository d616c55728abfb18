import HTTPTypes
import NIOCore
import NIOHTTP1

/// A ``ServiceAnswer`` as the whole HTTP/1 message the event-loop path writes in one buffer, below SwiftNIO's
/// response encoder: the status line, the answer's header fields, then the transport's (`Content-Length`, `Date`,
/// `Server`, `Connection`), and the body.
///
/// The event-loop path answers a request complete, never in parts, so nothing of the encoder's work (a head made of
/// `HTTPHeaders`, framing decided per response, three writes through each handler above the transport) is needed:
/// writing the message whole, with the two handlers it made unneeded, was 13 to 17 % of the single-JID rate
/// (Documentation/Benchmarks.md). The fields are the ones the encoder writes for the router's answers, in RFC 9112's
/// form; `QueryPathEquivalenceTests` holds the two paths' answers to the same status, fields and bytes.
struct AnswerMessage {
    var version: HTTPVersion
    /// Whether the connection stays open after the answer (the request's keep-alive).
    var keepAlive: Bool
    /// Whether the request was `HEAD`: the `GET`'s status and fields, `Content-Length` included, and no body
    /// (RFC 9110 §9.3.2).
    var headOnly: Bool

    init(version: HTTPVersion, keepAlive: Bool, headOnly: Bool) {
        self.version = version
        self.keepAlive = keepAlive
        self.headOnly = headOnly
    }

    /// The message that answers `request`.
    init(_ request: HTTPRequestHead) {
        self.init(version: request.version, keepAlive: request.isKeepAlive, headOnly: request.method == .HEAD)
    }

    /// Writes `answer` as one message into a buffer made by `allocator`.
    func encode(
        _ answer: ServiceAnswer, date: String, serverName: String, allocator: ByteBufferAllocator
    ) -> ByteBuffer {
        encode(
            status: answer.status, fields: answer.fields, bodyCount: answer.body.readableBytes, date: date,
            serverName: serverName, allocator: allocator
        ) { $0.writeImmutableBuffer(answer.body) }
    }

    /// Writes a message of `status` and `fields` whose body, `bodyCount` bytes, `writeBody` appends: a body held
    /// elsewhere (the connection's JSON text) goes into the message without a buffer of its own. The head is copied
    /// into the buffer in one access, since each write to a `ByteBuffer` pays its uniqueness and exclusivity checks
    /// (Documentation/Benchmarks.md, the query API's hot path).
    func encode(
        status: HTTPResponse.Status, fields: [ServiceAnswer.Field], bodyCount: Int, date: String, serverName: String,
        allocator: ByteBufferAllocator, writeBody: (inout ByteBuffer) -> Void
    ) -> ByteBuffer {
        // 1xx, 204 and 304 have no body and no Content-Length (RFC 9110 §8.6, §6.4.1).
        let code = status.code
        let bodiless = code < 200 || code == 204 || code == 304
        let reason = HTTPResponseStatus(statusCode: code).reasonPhrase
        let http10 = version.major == 1 && version.minor == 0
        // The head's longest form: every fixed piece below, three digits of status, twenty of Content-Length.
        var headBound = 128 + reason.utf8.count + date.utf8.count + serverName.utf8.count
        for field in fields { headBound += 4 + field.name.rawName.utf8.count + field.value.utf8.count }
        var buffer = allocator.buffer(capacity: headBound + (bodiless || headOnly ? 0 : bodyCount))
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: headBound) { memory in
            var head = HeadWriter(memory)
            head.append(http10 ? "HTTP/1.0 " : "HTTP/1.1 ")
            head.append(decimal: code)
            head.append(" ")
            head.append(reason)
            for field in fields {
                head.append("\r\n")
                head.append(field.name.rawName)
                head.append(": ")
                head.append(field.value)
            }
            if !bodiless {
                head.append("\r\nContent-Length: ")
                head.append(decimal: bodyCount)
            }
            head.append("\r\nDate: ")
            head.append(date)
            head.append("\r\nServer: ")
            head.append(serverName)
            // HTTP/1.0 keeps a connection only when asked to; HTTP/1.1 closes one only when asked to.
            if !keepAlive {
                head.append("\r\nConnection: close")
            } else if http10 {
                head.append("\r\nConnection: keep-alive")
            }
            head.append("\r\n\r\n")
            return head.count
        }
        if !bodiless && !headOnly { writeBody(&buffer) }
        return buffer
    }
}

/// Appends a message head's pieces to memory known to be large enough (``AnswerMessage``'s bound).
private struct HeadWriter {
    private let memory: UnsafeMutableRawBufferPointer
    private(set) var count = 0

    init(_ memory: UnsafeMutableRawBufferPointer) {
        self.memory = memory
    }

    mutating func append(_ text: StaticString) {
        copy(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { copy(UnsafeRawBufferPointer($0)) }
    }

    /// A non-negative integer in decimal.
    mutating func append(decimal value: Int) {
        var digits = 1
        var rest = value / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        precondition(value >= 0 && count + digits <= memory.count, "a message head over its bound")
        var remaining = value
        for index in stride(from: count + digits - 1, through: count, by: -1) {
            memory[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: remaining % 10)
            remaining /= 10
        }
        count += digits
    }

    private mutating func copy(_ bytes: UnsafeRawBufferPointer) {
        precondition(count + bytes.count <= memory.count, "a message head over its bound")
        UnsafeMutableRawBufferPointer(rebasing: memory[count...]).copyMemory(from: bytes)
        count += bytes.count
    }
}
