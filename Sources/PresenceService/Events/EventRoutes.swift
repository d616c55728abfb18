import HTTPTypes
import Hummingbird
import NIOCore
import PresenceStore
import PresenceWire

/// `/v1/presence/events`, the change stream as Server-Sent Events, on the router: its `HEAD`.
///
/// A stream is opened and written on its connection's event loop (``StorageAnswerHandler`` opens a
/// ``ChannelEventStream``), never by the router: an open stream then costs the replica its connection and its
/// subscription, not a task waiting in the router's handler. `HEAD` gives the stream's status and header fields,
/// the same decision (``EventStreamEndpoint/decide(target:)``) made, without opening one.
enum EventRoutes {
    /// The header fields of a stream's answer.
    static let streamHeaders: HTTPFields = [
        .contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-cache",
        HTTPField.Name("X-Accel-Buffering")!: "no",
    ]

    static func add(to router: Router<ServiceRequestContext>, endpoint: EventStreamEndpoint) {
        router.head(RouterPath(EventStreamEndpoint.path)) { request, _ -> Response in
            switch endpoint.decide(target: request.uri.description) {
            case .refused(let answer): answer.response
            case .stream, .otherRoute: Response(status: .ok, headers: streamHeaders)
            }
        }
    }
}

extension HTTPField.Name {
    static let lastEventID = HTTPField.Name("Last-Event-ID")!
}
