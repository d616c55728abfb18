import PresenceWire

/// Query answers for people: one row per JID.
enum QueryText {
    static func render(_ document: QueryDocument) -> String {
        var table = TextTable(header: [
            "jid", "state", "show", "status", "priority", "resource", "attendance", "since", "from",
        ])
        for result in document.results {
            table.rows.append([
                result.jid, result.state.rawValue + (result.cause.map { " (\($0))" } ?? ""),
                result.show?.rawValue ?? "-",
                result.status ?? "-", result.priority.map(String.init) ?? "-", result.resource ?? "-",
                result.attendance?.rawValue ?? "-", result.since ?? "-",
                result.origin.rawValue + (result.probeFailure.map { " (probe: \($0))" } ?? ""),
            ])
        }
        var text = table.render()
        if document.results.contains(where: { $0.live == false }) {
            text += "\nnot live: the service's XMPP connection is down; these are the statuses as of the drop"
        }
        if let error = document.error {
            text +=
                "\nstream error: \(error.condition) at \(Format.position(error)): \(error.message); "
                + "the answers reflect everything before it"
        }
        return text
    }
}
