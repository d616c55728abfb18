import FuzzSupport
import PresenceModel
import PresenceWire

/// The query API's request target (`/v1/presence/{jid}`, `/v1/presence?jid=…&policy=…`) never crashes the
/// parser, and what it says is sound: every JID it yields is a valid bare JID, and a malformed target's report
/// names a condition the API documents.
func fuzzQueryTarget(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let raw = String(decoding: UnsafeRawBufferPointer(start: UnsafeRawPointer(start), count: count), as: UTF8.self)
    // Half the inputs get the prefix, so the fuzzer spends its time past it.
    let target = count > 0 && start![0] & 1 == 0 ? "/v1/presence" + raw : raw
    let query: PresenceQueryTarget
    switch PresenceQueryTarget.parse(target) {
    case .otherRoute: return 0
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
