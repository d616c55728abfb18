import PresenceStore

/// The JSON contract of `presence query`: one result per JID asked for, in the order asked.
struct QueryReport: Encodable {
    struct Result: Encodable {
        let jid: String
        /// `available`, `offline`, `unknown` (never seen) or `lost` (the storage dropped it).
        let state: String
        let show: Nullable<String>
        let status: Nullable<String>
        let priority: Nullable<Int>
        let resource: Nullable<String>
        let attendance: Nullable<String>
        let since: Nullable<String>
        /// For `lost`: why, when the storage knows.
        let cause: Nullable<String>

        init(jid: BareJID, stored: StoredPresence) {
            self.jid = jid.rawValue
            var state = "unknown"
            var show: String?, status: String?, priority: Int?, resource: String?, attendance: String?, since: String?, cause: String?
            switch stored {
            case .present(let presence):
                switch presence.status {
                case .available(let best)?:
                    state = "available"
                    show = best.details.show?.rawValue
                    priority = Int(best.details.priority)
                    fallthrough
                case .offline?:
                    if state != "available" { state = "offline" }
                    let shown = presence.status!.presence
                    status = shown.details.status
                    resource = shown.resource.isEmpty ? nil : shown.resource
                    attendance = shown.details.attendance?.rawValue
                    since = shown.updatedAt.description
                case nil:
                    break
                }
            case .lost(let evictionCause):
                state = "lost"
                cause = evictionCause?.rawValue
            case .unknown:
                break
            }
            self.state = state
            self.show = Nullable(show)
            self.status = Nullable(status)
            self.priority = Nullable(priority)
            self.resource = Nullable(resource)
            self.attendance = Nullable(attendance)
            self.since = Nullable(since)
            self.cause = Nullable(cause)
        }
    }

    let results: [Result]
    let error: Nullable<ReplayReport.StreamError>

    func renderText() -> String {
        var table = TextTable(header: ["jid", "state", "show", "status", "priority", "resource", "attendance", "since"])
        for result in results {
            table.rows.append([
                result.jid, result.state + (result.cause.value.map { " (\($0))" } ?? ""), result.show.value ?? "-",
                result.status.value ?? "-", result.priority.value.map(String.init) ?? "-", result.resource.value ?? "-",
                result.attendance.value ?? "-", result.since.value ?? "-",
            ])
        }
        var text = table.render()
        if let error = error.value {
            text += "\nstream error: \(error.condition) at line \(error.line), column \(error.column): \(error.message); "
                + "the answers reflect everything before it"
        }
        return text
    }
}
