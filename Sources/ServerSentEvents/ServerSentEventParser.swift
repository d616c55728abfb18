/// Turns the bytes of a Server-Sent Events stream into events, however the bytes are cut into pieces.
///
/// Separate from any transport so that the same rules serve every reader: lines end in LF, CRLF or CR; a line
/// starting with `:` is a comment (the service's heartbeat); `event:`, `data:` (one line each, joined by newlines),
/// `id:` and `retry:` fields; a blank line dispatches the event, and an event without data is dropped. A field's
/// value loses one leading space. Unknown fields are ignored, as the WHATWG definition says. An event (or a line)
/// larger than ``maximumEventBytes`` is refused rather than held: a stream that never ends its event cannot take a
/// reader's memory.
public struct ServerSentEventParser: Sendable {
    /// An event grew past ``ServerSentEventParser/maximumEventBytes``.
    public struct EventTooLarge: Error, Hashable, Sendable {
        public let limit: Int

        public init(limit: Int) { self.limit = limit }
    }

    /// The largest event read, in bytes of its lines as they came.
    public let maximumEventBytes: Int
    public static let defaultMaximumEventBytes = 64 << 20

    /// The last `id:` seen: every later event carries it until another replaces it.
    public private(set) var lastEventID: String?
    /// The reconnection time the stream asked for with `retry:`, if any.
    public private(set) var retry: Duration?

    private var line: [UInt8] = []
    private var afterCarriageReturn = false
    private var atStart = true
    private var eventName: String?
    private var dataLines: [String] = []
    /// The bytes of the event being read so far, its current line included.
    private var eventBytes = 0

    public init(maximumEventBytes: Int = defaultMaximumEventBytes) {
        self.maximumEventBytes = maximumEventBytes
    }

    /// The events that `bytes`, appended to what came before, complete; throws ``EventTooLarge`` when the event
    /// being read grows past ``maximumEventBytes``.
    public mutating func parse(_ bytes: some Sequence<UInt8>) throws(EventTooLarge) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if afterCarriageReturn {
                afterCarriageReturn = false
                if byte == 10 { continue }  // the LF of a CRLF
            }
            switch byte {
            case 10, 13:
                afterCarriageReturn = byte == 13
                if let event = endLine() { events.append(event) }
            default:
                eventBytes += 1
                guard eventBytes <= maximumEventBytes else { throw EventTooLarge(limit: maximumEventBytes) }
                line.append(byte)
            }
        }
        return events
    }

    /// One complete line: a field, a comment, or the blank line that dispatches an event.
    private mutating func endLine() -> ServerSentEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        if atStart {
            atStart = false
            if line.starts(with: [0xEF, 0xBB, 0xBF]) { line.removeFirst(3) }  // a byte order mark
        }
        guard !line.isEmpty else { return dispatch() }
        guard line.first != UInt8(ascii: ":") else {
            // A comment (the heartbeat) is no part of the event.
            eventBytes -= line.count
            return nil
        }
        let colon = line.firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex
        let field = String(decoding: line[..<colon], as: UTF8.self)
        var valueStart = colon == line.endIndex ? colon : colon + 1
        if valueStart < line.endIndex, line[valueStart] == UInt8(ascii: " ") { valueStart += 1 }
        let value = String(decoding: line[valueStart...], as: UTF8.self)
        switch field {
        case "event": eventName = value
        case "data": dataLines.append(value)
        case "id" where !value.contains("\0"): lastEventID = value.isEmpty ? nil : value
        case "retry":
            if !value.isEmpty, value.utf8.allSatisfy({ (48 ... 57).contains($0) }), let milliseconds = Int(value) {
                retry = .milliseconds(milliseconds)
            }
        default: break
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            eventName = nil
            dataLines.removeAll()
            eventBytes = 0
        }
        guard !dataLines.isEmpty else { return nil }
        return ServerSentEvent(
            id: lastEventID, name: eventName.flatMap { $0.isEmpty ? nil : $0 } ?? "message",
            data: dataLines.joined(separator: "\n"))
    }
}
