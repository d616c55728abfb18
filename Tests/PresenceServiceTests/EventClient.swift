import Foundation
import PresenceService
import PresenceTestSupport
import PresenceWire
import ServerSentEvents
import Testing

/// A change-stream client for the tests: ``TestEventStream`` on the API's events path.
final class EventClient: Sendable {
    private let reader: TestEventStream
    let status: Int

    private init(_ reader: TestEventStream) {
        status = reader.status
        self.reader = reader
    }

    static func open(_ query: String, port: Int, lastEventID: String? = nil) async throws -> EventClient {
        EventClient(
            try await TestEventStream(
                host: "127.0.0.1", port: port, path: "/v1/presence/events\(query)", lastEventID: lastEventID))
    }

    func next() async throws -> ServerSentEvent? { try await reader.next() }

    /// The next `presence` event's answer and id.
    func nextAnswer() async throws -> (id: String?, result: PresenceQueryResult) {
        guard let event = try await next() else { throw TestFailure("the stream ended") }
        #expect(event.name == "presence")
        return (event.id, try JSONDecoder().decode(PresenceQueryResult.self, from: Data(event.data.utf8)))
    }

    /// The next event's answers: a `presence` event's one answer or a `snapshot` event's many, with the event's
    /// name and id.
    func nextAnswers() async throws -> (name: String, id: String?, results: [PresenceQueryResult]) {
        guard let event = try await next() else { throw TestFailure("the stream ended") }
        let data = Data(event.data.utf8)
        switch event.name {
        case "presence": return (event.name, event.id, [try JSONDecoder().decode(PresenceQueryResult.self, from: data)])
        case "snapshot" where event.data.hasPrefix("{\"columns\""):
            return (event.name, event.id, try Self.tableResults(data))
        case "snapshot": return (event.name, event.id, try JSONDecoder().decode(QueryDocument.self, from: data).results)
        default: throw TestFailure("an event named '\(event.name)'")
        }
    }

    func close() { reader.close() }

    /// A `SnapshotTable`'s rows as answers: each row's values named by the table's columns, decoded as a
    /// `PresenceQueryResult` object is.
    static func tableResults(_ data: Data) throws -> [PresenceQueryResult] {
        guard let table = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let columns = table["columns"] as? [String], let rows = table["rows"] as? [[Any]]
        else { throw TestFailure("not a snapshot table: \(String(decoding: data, as: UTF8.self).prefix(200))") }
        return try rows.map { row in
            guard row.count == columns.count else {
                throw TestFailure("a row of \(row.count) for \(columns.count) columns")
            }
            let object = Dictionary(uniqueKeysWithValues: zip(columns, row))
            return try JSONDecoder().decode(
                PresenceQueryResult.self, from: JSONSerialization.data(withJSONObject: object))
        }
    }
}
