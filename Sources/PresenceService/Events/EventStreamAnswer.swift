import HTTPTypes
import NIOCore

/// The status and header fields a change stream opens with (Server-Sent Events), and the answer to its `HEAD`: the
/// same fields, no stream opened.
enum EventStreamAnswer {
    /// The header fields of a stream's answer.
    static let fields: [ServiceAnswer.Field] = [
        .init(name: .contentType, value: "text/event-stream; charset=utf-8"),
        .init(name: .cacheControl, value: "no-cache"),
        .init(name: HTTPField.Name("X-Accel-Buffering")!, value: "no"),
    ]

    /// `HEAD` of a stream that would open.
    static let head = ServiceAnswer(status: .ok, fields: fields, body: ByteBuffer())
}
