import PresenceModel

/// The users and policy a presence query's request target asks for: `/v1/presence/{jid}[?policy=…]` or
/// `/v1/presence?jid=…&jid=…[&policy=…]`, percent-decoded by ``PercentEncodedTarget`` (a `+` stays a `+`: it is valid in
/// a JID's localpart), each JID parsed and normalised (a full JID stands for its bare JID).
///
/// ``parse(_:)`` is the one reading of a query's target: the event-loop path and the router both call it, so a target
/// means the same on either. JIDs are parsed straight from the target's bytes, without a `String` per JID in between
/// (a batch of a thousand is most of a request's parsing).
public struct PresenceQueryTarget: Equatable, Sendable {
    public static let prefix: StaticString = "/v1/presence"
    /// Paths under the prefix that are routes of their own, not JIDs, matched before percent-decoding (as a router
    /// matches its paths): `/v1/presence/even%74s` asks for the JID `events`.
    public static let reservedSegments: [StaticString] = ["events"]

    public var jids: [BareJID] = []
    public var policy: String?

    public init(jids: [BareJID], policy: String?) {
        self.jids = jids
        self.policy = policy
    }

    /// What a request target is.
    public enum Parsed: Equatable, Sendable {
        /// A presence query.
        case query(PresenceQueryTarget)
        /// A query whose target cannot be read: a JID that is not valid, a bad escape, a repeated policy. The report
        /// says which part, as the client wrote it.
        case malformed(ErrorReport)
        /// Not a presence query: another path, the change stream, a badge.
        case otherRoute
    }

    /// Reads a request target (the path and query as the request line has them).
    public static func parse(_ target: String) -> Parsed {
        var target = target
        return target.withUTF8 { PresenceQueryTarget.parse(utf8: $0) }
    }

    private init() {}

    private static func parse(utf8 target: UnsafeBufferPointer<UInt8>) -> Parsed {
        let prefix = UnsafeBufferPointer(
            start: PresenceQueryTarget.prefix.utf8Start, count: PresenceQueryTarget.prefix.utf8CodeUnitCount)
        guard target.starts(with: prefix) else { return .otherRoute }
        var query = PresenceQueryTarget()
        let questionMark = target[prefix.count...].firstIndex(of: UInt8(ascii: "?")) ?? target.endIndex
        let path = target[prefix.count ..< questionMark]
        if !path.isEmpty {
            // `/{jid}`: one segment, no further slash (`/{jid}/badge.svg` is the badge route).
            let segment = path.dropFirst()
            guard path.first == UInt8(ascii: "/"), !segment.isEmpty, !segment.contains(UInt8(ascii: "/")) else {
                return .otherRoute
            }
            let reserved = PresenceQueryTarget.reservedSegments.contains {
                segment.elementsEqual(UnsafeBufferPointer(start: $0.utf8Start, count: $0.utf8CodeUnitCount))
            }
            if reserved { return .otherRoute }
            switch PercentEncodedTarget.jid(segment) {
            case .jid(let jid): query.jids.append(jid)
            case .malformed(let report): return .malformed(report)
            }
        }
        guard questionMark != target.endIndex else { return .query(query) }
        var start = questionMark + 1
        while start <= target.endIndex {
            let end = target[start...].firstIndex(of: UInt8(ascii: "&")) ?? target.endIndex
            let pair = target[start ..< end]
            let equals = pair.firstIndex(of: UInt8(ascii: "=")) ?? end
            let name = pair[..<equals]
            let value = equals == end ? pair[end...] : pair[(equals + 1)...]
            if name.elementsEqual("jid".utf8) {
                // The single-JID path takes its JID from the path only.
                if path.isEmpty {
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
