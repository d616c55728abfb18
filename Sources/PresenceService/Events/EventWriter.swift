import NIOCore
import PresenceStore
import PresenceWire

/// Formats Server-Sent Events into one buffer per write, framed as the stream's ``EventStreamFraming`` says.
struct EventWriter {
    let lookup: PresenceLookup
    /// Whether the XMPP source is live now; nil without a source.
    let live: @Sendable () -> Bool?
    let framing: EventStreamFraming
    /// The events of recent changes, shared by every stream.
    let changes: ChangeEvents
    /// Empty and without storage between writes, so that an idle stream holds no buffer.
    private var buffer = ByteBuffer()
    /// A change's shared event, when it is all this write holds so far: written as it is unless more joins it.
    private var alone: SharedEvent?

    init(
        lookup: PresenceLookup, live: @escaping @Sendable () -> Bool?, framing: EventStreamFraming,
        changes: ChangeEvents
    ) {
        self.lookup = lookup
        self.live = live
        self.framing = framing
        self.changes = changes
    }

    /// Starts the next write's buffer, unless it is started, with room before its events for the framing to
    /// write in place, and the shared event written so far, if any, copied in.
    private mutating func start() {
        guard buffer.writerIndex == 0 else { return }
        buffer.writeRepeatingByte(0, count: EventStreamFraming.headroom)
        buffer.moveReaderIndex(forwardBy: EventStreamFraming.headroom)
        if let alone {
            self.alone = nil
            buffer.writeImmutableBuffer(alone.event)
        }
    }

    /// How much a write may carry at most (bar one event): a snapshot of 100,000 people goes out in pieces.
    static let flushBytes = 64 * 1024

    /// The bytes of the events written since the last ``take()``.
    var byteCount: Int { buffer.readableBytes + (alone?.chunk.readableBytes ?? 0) }

    /// The events written since the last call, framed: one write of the stream.
    mutating func take() -> ByteBuffer {
        if let alone {
            self.alone = nil
            return framing.alone(alone)
        }
        var framed = buffer
        buffer = ByteBuffer()  // first, so that framing writes into the only reference rather than a copy
        framing.frame(&framed)
        return framed
    }

    /// The user's answer as it is now, as a `cache-only` query gives it (the tier, partial, restored).
    func answer(_ key: BareJID) -> PresenceQueryResult {
        PresenceQueryResult(lookup.storedAnswer(key), live: live())
    }

    /// One `presence` event: one person's answer.
    mutating func event(_ result: PresenceQueryResult, id: String) {
        start()
        Self.write(result, id: id, to: &buffer)
    }

    /// The `presence` event of change `id`, to `key`: the person's answer as it is now, encoded by the first
    /// stream to write that change (``ChangeEvents``), and written as it is when it is the write's only event.
    mutating func change(_ key: BareJID, id: EventID) {
        let event = changes.event(id.sequence) {
            SharedEvent { Self.write(answer(key), id: id.text, to: &$0) }
        }
        if buffer.writerIndex == 0 && alone == nil {
            alone = event
        } else {
            start()
            buffer.writeImmutableBuffer(event.event)
        }
    }

    private static func write(_ result: PresenceQueryResult, id: String, to buffer: inout ByteBuffer) {
        buffer.writeString("id: \(id)\nevent: presence\ndata: ")
        buffer.writeBytes(result.jsonBytes())
        buffer.writeString("\n\n")
    }

    /// One `snapshot` event: several people's answers as one document, a query document or a table.
    mutating func snapshot(_ document: some JSONDocument, id: String) {
        start()
        buffer.writeString("id: \(id)\nevent: snapshot\ndata: ")
        buffer.writeBytes(document.jsonBytes())
        buffer.writeString("\n\n")
    }

    mutating func comment(_ text: String) {
        start()
        buffer.writeString(": \(text)\n\n")
    }

    mutating func retry(milliseconds: Int) {
        start()
        buffer.writeString("retry: \(milliseconds)\n\n")
    }
}
