import PresenceStore

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
        QueryDocument.write(error: error, to: &writer) { writer in
            writer.array(results) { writer, result in result.write(to: &writer) }
        }
    }

    /// Writes the document `QueryDocument(results: answers.map { PresenceQueryResult($0, live: live) })` is, one
    /// result at a time: a batch of a thousand answers never exists as a thousand results at once.
    public static func write(answers: [LookupAnswer], live: Bool?, to writer: inout JSONWriter) {
        write(error: nil, to: &writer) { writer in
            writer.array(answers) { writer, answer in PresenceQueryResult(answer, live: live).write(to: &writer) }
        }
    }

    /// Writes the document ``write(answers:live:to:)`` writes for `lookup.lookup(jids, policy:)`, when the storage
    /// alone answers every user (``PresenceLookup/withStorageAnswers(_:policy:_:)``), straight from the storage's
    /// memory; false, with the text incomplete, when one needs the server.
    public static func writeStorageAnswers(
        _ jids: [BareJID], from lookup: PresenceLookup, policy: LookupPolicy?, live: Bool?,
        to writer: inout JSONWriter
    ) -> Bool {
        var answered = false
        write(error: nil, to: &writer) { writer in
            writer.array(writingElements: { writer in
                answered = lookup.withStorageAnswers(jids, policy: policy) { jid, stored in
                    writer.element { writer in
                        PresenceQueryResult.write(jid: jid, stored: stored, live: live, to: &writer)
                    }
                }
            })
        }
        return answered
    }

    private static func write(
        error: ErrorReport?, to writer: inout JSONWriter, results: (inout JSONWriter) -> Void
    ) {
        writer.object { writer in
            writer.key("error")
            if let error { error.write(to: &writer) } else { writer.null() }
            writer.key("results")
            results(&writer)
        }
    }
}
