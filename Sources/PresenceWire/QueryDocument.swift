/// The answer to a presence query, from the command line and from `GET /v1/presence`: one result per JID asked
/// for, in order, and the error that ended the replayed stream (`null` from the service).
public struct QueryDocument: Hashable, Sendable, Decodable, JSONDocument {
    public var results: [PresenceQueryResult]
    public var error: ErrorReport?

    public init(results: [PresenceQueryResult], error: ErrorReport? = nil) {
        self.results = results
        self.error = error
    }

    /// Answers are about 290 bytes each (every member is written, null or not).
    public var estimatedJSONSize: Int { 64 + results.count * 320 }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("error")
            if let error { error.write(to: &writer) } else { writer.null() }
            writer.key("results")
            writer.array(results) { writer, result in result.write(to: &writer) }
        }
    }
}
