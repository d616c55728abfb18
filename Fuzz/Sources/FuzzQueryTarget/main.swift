import FuzzSupport
import PresenceModel
import PresenceWire

/// The query API's request target (`/v1/presence/{jid}`, `/v1/presence?jid=…&policy=…`) and the JID decoder every
/// route shares (`PercentEncodedTarget`) never crash, and what they say is sound: every JID it yields is a valid bare JID, and a malformed target's report
/// names a condition the API documents.
func fuzzQueryTarget(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let raw = String(decoding: UnsafeRawBufferPointer(start: UnsafeRawPointer(start), count: count), as: UTF8.self)
    // Half the inputs get the prefix, so the fuzzer spends its time past it.
    let target = count > 0 && start![0] & 1 == 0 ? "/v1/presence" + raw : raw
    // The one decoder every route reads a JID with: a JID it yields is a valid bare JID, a refusal is jid-malformed.
    switch PercentEncodedTarget.jid(raw) {
    case .jid(let jid): precondition((try? BareJID(jid.rawValue)) == jid, "\(jid) from \(raw) is a valid bare JID")
    case .malformed(let report): precondition(report.condition == "jid-malformed", "\(report) for \(raw)")
    }
    // One pair for each `&`-separated part of the query, whose name and value are that part's.
    let pairs = PercentEncodedTarget.queryPairs(of: target)
    if let questionMark = target.firstIndex(of: "?") {
        let parts = target[target.index(after: questionMark)...].split(separator: "&", omittingEmptySubsequences: false)
        precondition(pairs.count == parts.count, "\(pairs.count) pairs in \(target)")
        for (pair, part) in zip(pairs, parts) {
            precondition(part.hasPrefix(pair.name) && part.hasSuffix(pair.value), "\(pair) of \(part)")
        }
    } else {
        precondition(pairs.isEmpty, "pairs without a query in \(target)")
    }
    // The query routes as the service's route table reads them: `/v1/presence/{jid}` names one JID in its path,
    // `/v1/presence` asks in its query; any other path is not a query.
    let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
    let segment = path.dropFirst("/v1/presence/".count)
    let pathJID: Substring?
    if path == "/v1/presence" {
        pathJID = nil
    } else if path.hasPrefix("/v1/presence/"), !segment.isEmpty, !segment.contains("/") {
        pathJID = segment
    } else {
        return 0
    }
    let query: PresenceQueryTarget
    switch PresenceQueryTarget.parse(pathJID: pathJID, target: target) {
    case .malformed(let report):
        precondition(["jid-malformed", "bad-request"].contains(report.condition), "\(report) for \(target)")
        return 0
    case .query(let parsed): query = parsed
    }
    for jid in query.jids {
        precondition((try? BareJID(jid.rawValue)) == jid, "\(jid) from \(target) is a valid bare JID")
    }
    return 0
}

runLibFuzzer { data, size in fuzzQueryTarget(data, Int(size)) }
