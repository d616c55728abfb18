import PresenceModel

/// The users and policy a presence query's request target asks for: `/v1/presence/{jid}[?policy=…]` or
/// `/v1/presence?jid=…&jid=…[&policy=…]`, percent-decoded by ``PercentEncodedTarget`` (a `+` stays a `+`: it is valid in
/// a JID's localpart), each JID parsed and normalised (a full JID stands for its bare JID).
///
/// ``parse(pathJID:target:)`` is the one reading of a query's target: every request's decision calls it, so a target
/// means the same on either path. JIDs are parsed straight from the target's bytes, without a `String` per JID in between
/// (a batch of a thousand is most of a request's parsing).
public struct PresenceQueryTarget: Equatable, Sendable {
    public var jids: [BareJID] = []
    public var policy: String?

    public init(jids: [BareJID], policy: String?) {
        self.jids = jids
        self.policy = policy
    }

    /// What a request target asks.
    public enum Parsed: Equatable, Sendable {
        /// A presence query.
        case query(PresenceQueryTarget)
        /// A query whose target cannot be read: a JID that is not valid, a bad escape, a repeated policy. The report
        /// says which part, as the client wrote it.
        case malformed(ErrorReport)
    }

    /// Reads a query from its request target (the path and query as the request line has them): `pathJID` is the
    /// path's JID segment, still percent-encoded, for `/v1/presence/{jid}` (whose `jid=` parameters are ignored),
    /// nil for `/v1/presence?jid=…` (which route a path is, is the service's route table's).
    public static func parse(pathJID: Substring?, target: String) -> Parsed {
        var target = target
        guard var segment = pathJID else { return target.withUTF8 { parse(pathJID: nil, target: $0) } }
        return segment.withUTF8 { jid in target.withUTF8 { parse(pathJID: jid[...], target: $0) } }
    }

    private init() {}

    private static func parse(pathJID: Slice<UnsafeBufferPointer<UInt8>>?, target: UnsafeBufferPointer<UInt8>) -> Parsed {
        var query = PresenceQueryTarget()
        if let pathJID {
            switch PercentEncodedTarget.jid(pathJID) {
            case .jid(let jid): query.jids.append(jid)
            case .malformed(let report): return .malformed(report)
            }
        }
        guard let questionMark = target.firstIndex(of: UInt8(ascii: "?")) else { return .query(query) }
        var start = questionMark + 1
        while start <= target.endIndex {
            let end = target[start...].firstIndex(of: UInt8(ascii: "&")) ?? target.endIndex
            let pair = target[start ..< end]
            let equals = pair.firstIndex(of: UInt8(ascii: "=")) ?? end
            let name = pair[..<equals]
            let value = equals == end ? pair[end...] : pair[(equals + 1)...]
            if name.elementsEqual("jid".utf8) {
                // The single-JID path takes its JID from the path only.
                if pathJID == nil {
                    switch PercentEncodedTarget.jid(value) {
                    case .jid(let jid): query.jids.append(jid)
                    case .malformed(let report): return .malformed(report)
                    }
                }
            } else if name.elementsEqual("policy".utf8) {
                guard query.policy == nil else {
                    return .malformed(ErrorReport(condition: "bad-request", message: "policy= is given more than once"))
                }
                guard let decoded = PercentEncodedTarget.decode(value) else {
                    return .malformed(
                        ErrorReport(condition: "bad-request", message: "policy= is not percent-encoded UTF-8"))
                }
                query.policy = decoded
            }
            start = end + 1
        }
        return .query(query)
    }
}
