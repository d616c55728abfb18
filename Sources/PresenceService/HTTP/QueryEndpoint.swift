import PresenceModel
import PresenceStore
import PresenceWire

/// The presence query, `GET /v1/presence/{jid}` and `GET /v1/presence?jid=…`: what a request asks
/// (``PresenceQueryTarget``), held to this service's rules, and answered.
///
/// ``FrontDoor`` calls ``decide(_:jidSegment:)`` for every query; the event-loop path (``StorageAnswerHandler``) writes
/// the answers through ``writeStorageAnswers(_:policy:to:)``, the router (``FrontDoorResponder``) through
/// ``answer(_:policy:)`` when one needs a probe: each rule (the target's reading, the batch limit, the policy, the
/// `live` flag) exists here once. A new check on queries goes in ``decide(_:jidSegment:)``.
struct QueryEndpoint: Sendable {
    let lookup: PresenceLookup
    /// Whether the XMPP source is live now; nil without a source.
    let live: @Sendable () -> Bool?
    /// Most JIDs in one batch (`--http-max-batch`).
    let maxBatchJIDs: Int

    enum Decision {
        /// Answer these users under this policy (the lookup's default when nil).
        case lookup(jids: [BareJID], policy: LookupPolicy?)
        /// Answer this instead: the request cannot be served as written.
        case refused(ServiceAnswer)
    }

    /// Decides on a request target (path and query, as the request line has them) whose path names the JID in
    /// `jidSegment` (`/v1/presence/{jid}`) or none (`/v1/presence?jid=…`).
    func decide(_ target: String, jidSegment: Substring?) -> Decision {
        let query: PresenceQueryTarget
        switch PresenceQueryTarget.parse(pathJID: jidSegment, target: target) {
        case .malformed(let report): return .refused(.json(ErrorDocument(report), status: .badRequest))
        case .query(let parsed): query = parsed
        }
        guard !query.jids.isEmpty else { return .refused(.badRequest("bad-request", "give at least one jid=... parameter")) }
        guard query.jids.count <= maxBatchJIDs else {
            return .refused(
                .badRequest(
                    "bad-request",
                    "at most \(maxBatchJIDs) JIDs per request (--http-max-batch); \(query.jids.count) given: ask in parts"
                ))
        }
        guard let raw = query.policy else { return .lookup(jids: query.jids, policy: nil) }
        guard let policy = LookupPolicy(rawValue: raw) else {
            return .refused(
                .badRequest(
                    "bad-request",
                    "unknown policy '\(raw)'; use one of \(LookupPolicy.allCases.map(\.rawValue).joined(separator: ", "))"
                ))
        }
        // Well formed, but this deployment cannot follow it: 409 (the service's state, not the request, is at odds),
        // so a client can tell it from a malformed request.
        guard policy == .cacheOnly || lookup.prober != nil else {
            return .refused(
                .error(
                    .conflict, "feature-not-implemented",
                    "policy '\(policy)' needs an XMPP source to probe; this service has none"))
        }
        return .lookup(jids: query.jids, policy: policy)
    }

    /// Writes the answer document when the storage alone answers every JID under `policy`; false (with `writer`
    /// holding a partial text) when one needs a probe.
    func writeStorageAnswers(_ jids: [BareJID], policy: LookupPolicy?, to writer: inout JSONWriter) -> Bool {
        QueryDocument.writeStorageAnswers(jids, from: lookup, policy: policy, live: live(), to: &writer)
    }

    /// The answer document, probing the XMPP server where the policy and the storage call for it.
    func answer(_ jids: [BareJID], policy: LookupPolicy?) async -> ServiceAnswer {
        let answers = await lookup.lookup(jids, policy: policy)
        var writer = JSONWriter(reservingCapacity: 64 + answers.count * 320)
        QueryDocument.write(answers: answers, live: live(), to: &writer)
        return .json(writer)
    }
}
