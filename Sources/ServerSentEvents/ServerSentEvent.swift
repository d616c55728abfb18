/// One event of a Server-Sent Events stream (`text/event-stream`), as the stream dispatched it.
///
/// A plain value so that a reader can hand it on between tasks; the fields follow the WHATWG definition.
public struct ServerSentEvent: Sendable, Equatable {
    /// The stream's last event ID when the event was dispatched: the latest `id:` field, which lasts across
    /// events until another replaces it. A client sends it back as `Last-Event-ID` to resume.
    public var id: String?
    /// The `event:` field, `message` when the event had none.
    public var name: String
    /// The `data:` lines, joined by newlines.
    public var data: String

    public init(id: String? = nil, name: String = "message", data: String) {
        self.id = id
        self.name = name
        self.data = data
    }
}
