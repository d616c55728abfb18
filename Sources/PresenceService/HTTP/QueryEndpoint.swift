import PresenceModel
import PresenceStore
import PresenceWire

/// The presence query, `GET /v1/presence/{jid}` and `GET /v1/presence?jid=…`: what a request asks
/// (``PresenceQueryTarget``), held to this service's rules, and answered.
///
/// The event-loop path (``StorageAnswerHandler``) and the router (``QueryRoutes``) both call ``decide(target:)`` and
/// write answers through ``writeStorageAnswers(_:policy:to:)`` or ``answer(_:policy:)``: each rule (the target's
/// reading, the batch limit, the policy, the `live` flag) exists here once. A new check on queries goes in
/// ``decide(target:)``.
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
        /// Not a presence query: another route's.
        case otherRoute
    }

    /// Decides on a request target (path and query, as the request line has them).
    func decide(target: String) -> Decision {
        let query: PresenceQueryTarget
        switch PresenceQueryTarget.parse(target) {
        case .otherRoute: return .otherRoute
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

    /// The whole answer to a request target the router matched as a presence query.
    func respond(to target: String) async -> ServiceAnswer {
        switch decide(target: target) {
        case .lookup(let jids, let policy): await answer(jids, policy: policy)
        case .refused(let answer): answer
        case .otherRoute: .error(.notFound, "not-found", "no such resource")
        }
    }
}
