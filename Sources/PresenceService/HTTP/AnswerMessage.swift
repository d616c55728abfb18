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

    /// The message that answers `request`.
    init(_ request: HTTPRequestHead) {
        version = request.version
        keepAlive = request.isKeepAlive
        headOnly = request.method == .HEAD
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
    /// elsewhere (the connection's JSON text) goes into the message without a buffer of its own.
    func encode(
        status: HTTPResponse.Status, fields: [ServiceAnswer.Field], bodyCount: Int, date: String, serverName: String,
        allocator: ByteBufferAllocator, writeBody: (inout ByteBuffer) -> Void
    ) -> ByteBuffer {
        // 1xx, 204 and 304 have no body and no Content-Length (RFC 9110 §8.6, §6.4.1).
        let code = status.code
        let bodiless = code < 200 || code == 204 || code == 304
        var buffer = allocator.buffer(capacity: 256 + (bodiless || headOnly ? 0 : bodyCount))
        buffer.writeStaticString(version.major == 1 && version.minor == 0 ? "HTTP/1.0 " : "HTTP/1.1 ")
        buffer.writeString(String(code))
        buffer.writeStaticString(" ")
        buffer.writeString(HTTPResponseStatus(statusCode: code).reasonPhrase)
        for field in fields {
            buffer.writeStaticString("\r\n")
            buffer.writeString(field.name.rawName)
            buffer.writeStaticString(": ")
            buffer.writeString(field.value)
        }
        if !bodiless {
            buffer.writeStaticString("\r\nContent-Length: ")
            buffer.writeString(String(bodyCount))
        }
        buffer.writeStaticString("\r\nDate: ")
        buffer.writeString(date)
        buffer.writeStaticString("\r\nServer: ")
        buffer.writeString(serverName)
        // HTTP/1.0 keeps a connection only when asked to; HTTP/1.1 closes one only when asked to.
        if !keepAlive {
            buffer.writeStaticString("\r\nConnection: close")
        } else if version.major == 1 && version.minor == 0 {
            buffer.writeStaticString("\r\nConnection: keep-alive")
        }
        buffer.writeStaticString("\r\n\r\n")
        if !bodiless && !headOnly { writeBody(&buffer) }
        return buffer
    }
}
