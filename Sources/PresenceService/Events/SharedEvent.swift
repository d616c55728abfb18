import NIOCore

/// One change's event, encoded once and framed as a chunk of its own: a stream whose write is this event alone
/// writes these very bytes (no copy, no buffer of its own), and a stream whose write carries more copies the event
/// into it.
struct SharedEvent: Sendable {
    /// The event framed as one chunk (RFC 9112 §7.1): its size line, the event, CRLF.
    let chunk: ByteBuffer
    /// The bytes of the chunk's size line.
    private let sizeLine: Int

    /// The event `write` encodes, framed as a chunk.
    init(encoding write: (inout ByteBuffer) -> Void) {
        var buffer = ByteBuffer()
        buffer.writeRepeatingByte(0, count: EventStreamFraming.headroom)
        buffer.moveReaderIndex(forwardBy: EventStreamFraming.headroom)
        write(&buffer)
        EventStreamFraming.chunked.frame(&buffer)
        sizeLine = EventStreamFraming.headroom - buffer.readerIndex
        chunk = buffer
    }

    /// The event's bytes, unframed: a view of ``chunk``'s.
    var event: ByteBuffer {
        chunk.getSlice(at: chunk.readerIndex + sizeLine, length: chunk.readableBytes - sizeLine - 2) ?? ByteBuffer()
    }
}
