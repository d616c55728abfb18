import NIOCore
import PresenceStore
import PresenceWire

/// Formats Server-Sent Events into one buffer per write.
struct EventWriter {
    let lookup: PresenceLookup
    /// Whether the XMPP source is live now; nil without a source.
    let live: @Sendable () -> Bool?
    private var buffer = ByteBuffer()

    init(lookup: PresenceLookup, live: @escaping @Sendable () -> Bool?) {
        self.lookup = lookup
        self.live = live
    }

    /// How much a write may carry at most (bar one event): a snapshot of 100,000 people goes out in pieces.
    static let flushBytes = 64 * 1024

    var byteCount: Int { buffer.readableBytes }

    mutating func take() -> ByteBuffer {
        defer { buffer = ByteBuffer() }
        return buffer
    }

    /// The user's answer as it is now, as a `cache-only` query gives it (the tier, partial, restored).
    func answer(_ key: BareJID) -> PresenceQueryResult {
        PresenceQueryResult(lookup.storedAnswer(key), live: live())
    }

    /// One `presence` event: one person's answer.
    mutating func event(_ result: PresenceQueryResult, id: String) {
        buffer.writeString("id: \(id)\nevent: presence\ndata: ")
        buffer.writeBytes(result.jsonBytes())
        buffer.writeString("\n\n")
    }

    /// One `snapshot` event: several people's answers as one document, a query document or a table.
    mutating func snapshot(_ document: some JSONDocument, id: String) {
        buffer.writeString("id: \(id)\nevent: snapshot\ndata: ")
        buffer.writeBytes(document.jsonBytes())
        buffer.writeString("\n\n")
    }

    mutating func comment(_ text: String) {
        buffer.writeString(": \(text)\n\n")
    }

    mutating func retry(milliseconds: Int) {
        buffer.writeString("retry: \(milliseconds)\n\n")
    }
}
