import NIOCore
import NIOHTTP1
import PresenceWire

/// How a change stream's body goes on the wire after its response head, decided once from the request's HTTP
/// version: the head says it (``headerFields``) and every write of the body follows it (``frame(_:)``, ``end``).
///
/// A stream's connection carries nothing but that stream once it opens, so its body is written as bytes straight
/// to the transport (TLS or the socket), below the HTTP encoder: each write is one buffer, already framed, where
/// going through the response encoder and the request handlers above it cost three buffers and four handlers per
/// write (Documentation/Benchmarks.md, CPU per delivered event).
enum EventStreamFraming {
    /// HTTP/1.1: `Transfer-Encoding: chunked` (RFC 9112 §7.1), each write one chunk, the end the last chunk.
    case chunked
    /// HTTP/1.0: the bytes as they are; the end of the body is the close of the connection (RFC 9112 §6.3).
    case untilClose

    init(version: HTTPVersion) {
        self = version.major == 1 && version.minor == 0 ? .untilClose : .chunked
    }

    /// Bytes a buffer keeps free before its body for ``frame(_:)`` to write the chunk's size line in place: 16
    /// hexadecimal digits and CRLF, room for any size a buffer can have.
    static let headroom = 18

    /// The fields the response head carries for this framing.
    var headerFields: [(name: String, value: String)] {
        switch self {
        case .chunked: [("Transfer-Encoding", "chunked")]
        case .untilClose: [("Connection", "close")]
        }
    }

    /// Frames `body` (whose reader index is at least ``headroom`` bytes into it) as one write of the stream.
    func frame(_ body: inout ByteBuffer) {
        guard case .chunked = self else { return }
        // The size in hexadecimal, then CRLF, written backwards in place: no string made per write.
        var size = body.readableBytes
        var start = body.readerIndex - 2
        precondition(start >= 16, "a stream's buffer keeps EventStreamFraming.headroom bytes before its body")
        _ = body.setStaticString("\r\n", at: start)
        repeat {
            start -= 1
            body.setInteger(HexDigit.lowercase(size & 0xF), at: start)
            size >>= 4
        } while size > 0
        body.moveReaderIndex(to: start)
        body.writeStaticString("\r\n")
    }

    /// The write of `event` alone, framed: the shared chunk as it is, or its event unframed.
    func alone(_ event: SharedEvent) -> ByteBuffer {
        switch self {
        case .chunked: event.chunk
        case .untilClose: event.event
        }
    }

    /// What ends the body before the connection closes: the last chunk, or nothing.
    var end: ByteBuffer {
        switch self {
        case .chunked: ByteBuffer(string: "0\r\n\r\n")
        case .untilClose: ByteBuffer()
        }
    }
}
