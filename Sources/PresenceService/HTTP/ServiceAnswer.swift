import HTTPTypes
import Hummingbird
import NIOCore
import PresenceWire

/// A whole HTTP answer as the service decides it: the status, the answer's own header fields and the body.
///
/// The router sends it as a Hummingbird `Response` (``response``); the event-loop path (``StorageAnswerHandler``)
/// writes the same fields and bytes itself, so an answer is the same whichever path carries it. `Content-Length`,
/// `Date`, `Server` and `Connection` belong to the transport and are added by each.
struct ServiceAnswer: Sendable {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var body: ByteBuffer

    /// The header fields of every JSON answer.
    static let jsonHeaders: HTTPFields = [.contentType: "application/json; charset=utf-8"]

    /// A JSON answer of the text `writer` holds.
    static func json(_ writer: borrowing JSONWriter, status: HTTPResponse.Status = .ok) -> ServiceAnswer {
        ServiceAnswer(
            status: status, headers: jsonHeaders, body: writer.withUnsafeBytes { ByteBuffer(bytes: $0) })
    }

    /// A JSON answer of one wire-format document.
    static func json(_ document: some JSONDocument, status: HTTPResponse.Status = .ok) -> ServiceAnswer {
        var writer = JSONWriter(reservingCapacity: document.estimatedJSONSize)
        document.write(to: &writer)
        return json(writer, status: status)
    }

    /// An error document (`{"error": {"condition": …, "message": …}}`).
    static func error(_ status: HTTPResponse.Status, _ condition: String, _ message: String) -> ServiceAnswer {
        json(ErrorDocument(ErrorReport(condition: condition, message: message)), status: status)
    }

    /// A 400 for a request that is malformed whatever the deployment.
    static func badRequest(_ condition: String, _ message: String) -> ServiceAnswer {
        error(.badRequest, condition, message)
    }

    /// The answer as the router returns it.
    var response: Response { Response(status: status, headers: headers, body: .init(byteBuffer: body)) }
}
