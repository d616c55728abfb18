/// A snapshot's answers as a table, the change stream's `snapshot=table` form:
/// `{"columns":["asOf",...,"status"],"rows":[[null,...,"In a review"],...]}`. Each row holds one answer's members'
/// values in the columns' order (``PresenceQueryResult/columns``), so a snapshot of many people spends its bytes
/// on values rather than on the same member names again for every person: about half a query document's size.
public struct SnapshotTable: Sendable, JSONDocument {
    public var results: [PresenceQueryResult]

    public init(results: [PresenceQueryResult]) {
        self.results = results
    }

    /// Rows are about 150 bytes each.
    public var estimatedJSONSize: Int { 256 + results.count * 170 }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("columns")
            writer.strings(PresenceQueryResult.columns)
            writer.key("rows")
            writer.array(results) { writer, result in result.write(as: .row, to: &writer) }
        }
    }
}
