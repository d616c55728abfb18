import PresenceStore

/// The JSON contract of `presence query` (and of `GET /v1/presence`): one result per JID asked for, in order.
struct QueryReport: Codable {
    let results: [PresenceQueryResult]
    let error: ReplayReport.StreamError?

    private enum CodingKeys: String, CodingKey { case results, error }

    init(results: [PresenceQueryResult], error: ReplayReport.StreamError?) {
        self.results = results
        self.error = error
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(results, forKey: .results)
        try container.encode(error, forKey: .error)  // null when there was none
    }

    func renderText() -> String {
        var table = TextTable(header: ["jid", "state", "show", "status", "priority", "resource", "attendance", "since"])
        for result in results {
            table.rows.append([
                result.jid, result.state + (result.cause.map { " (\($0))" } ?? ""), result.show ?? "-", result.status ?? "-",
                result.priority.map(String.init) ?? "-", result.resource ?? "-", result.attendance ?? "-", result.since ?? "-",
            ])
        }
        var text = table.render()
        if let error {
            text += "\nstream error: \(error.condition) at line \(error.line), column \(error.column): \(error.message); "
                + "the answers reflect everything before it"
        }
        return text
    }
}
