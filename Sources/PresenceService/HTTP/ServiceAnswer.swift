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
    /// One header field. Names and values are kept as the strings they are written as: the event-loop path writes
    /// them without converting anything per request.
    struct Field: Sendable {
        let name: HTTPField.Name
        let value: String
    }

    var status: HTTPResponse.Status
    var fields: [Field]
    var body: ByteBuffer

    /// The header fields of every JSON answer.
    static let jsonFields = [Field(name: .contentType, value: "application/json; charset=utf-8")]

    /// A JSON answer of the text `writer` holds.
    static func json(_ writer: borrowing JSONWriter, status: HTTPResponse.Status = .ok) -> ServiceAnswer {
        ServiceAnswer(status: status, fields: jsonFields, body: writer.withUnsafeBytes { ByteBuffer(bytes: $0) })
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

    /// The answer with one more header field.
    func adding(_ name: HTTPField.Name, _ value: String) -> ServiceAnswer {
        var answer = self
        answer.fields.append(Field(name: name, value: value))
        return answer
    }

    /// The answer as the router returns it.
    var response: Response {
        var headers = HTTPFields()
        for field in fields { headers.append(HTTPField(name: field.name, value: field.value)) }
        return Response(status: status, headers: headers, body: .init(byteBuffer: body))
    }
}
