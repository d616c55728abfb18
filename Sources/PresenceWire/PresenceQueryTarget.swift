import PresenceModel

/// The users and policy a presence query's request target asks for: `/v1/presence/{jid}[?policy=…]` or
/// `/v1/presence?jid=…&jid=…[&policy=…]`, percent-decoded (a `+` stays a `+`: it is valid in a JID's localpart), each
/// JID parsed and normalised (a full JID stands for its bare JID).
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
            switch PresenceQueryTarget.jid(segment) {
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
                    switch PresenceQueryTarget.jid(value) {
                    case .jid(let jid): query.jids.append(jid)
                    case .malformed(let report): return .malformed(report)
                    }
                }
            } else if name.elementsEqual("policy".utf8) {
                guard query.policy == nil else {
                    return .malformed(ErrorReport(condition: "bad-request", message: "policy= is given more than once"))
                }
                guard let decoded = PresenceQueryTarget.decode(value) else {
                    return .malformed(
                        ErrorReport(condition: "bad-request", message: "policy= is not percent-encoded UTF-8"))
                }
                query.policy = decoded
            }
            start = end + 1
        }
        return .query(query)
    }

    /// The bare JID a percent-encoded slice of the target stands for, or why it is none.
    private enum JIDReading {
        case jid(BareJID)
        case malformed(ErrorReport)
    }

    private static func jid(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> JIDReading {
        let parsed = withDecoded(bytes) { utf8 in Result { () throws(JIDError) in try JID(utf8: utf8).bare } }
        switch parsed {
        case .success(let jid)?: return .jid(jid)
        case .failure(let error)?:
            let text = decode(bytes) ?? String(decoding: UnsafeBufferPointer(rebasing: bytes), as: UTF8.self)
            return .malformed(ErrorReport(condition: "jid-malformed", message: "'\(text)' is not a valid JID: \(error)"))
        case nil:
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes), as: UTF8.self)
            return .malformed(
                ErrorReport(condition: "jid-malformed", message: "'\(text)' is not a valid JID: a bad percent-escape"))
        }
    }

    /// Calls `body` with the bytes a percent-encoded slice stands for, copying only when it has escapes; nil for a
    /// bad escape.
    private static func withDecoded<R>(
        _ bytes: Slice<UnsafeBufferPointer<UInt8>>, _ body: (UnsafeBufferPointer<UInt8>) -> R?
    ) -> R? {
        guard bytes.contains(UInt8(ascii: "%")) else { return body(UnsafeBufferPointer(rebasing: bytes)) }
        return percentDecoded(bytes)?.withUnsafeBufferPointer(body)
    }

    /// Percent-decodes into UTF-8 text, as the router does (a `+` stays a `+`: it is valid in a JID's localpart);
    /// nil for a bad escape or bytes that are not UTF-8.
    static func decode(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> String? {
        guard bytes.contains(UInt8(ascii: "%")) else {
            return String(validating: UnsafeBufferPointer(rebasing: bytes), as: UTF8.self)
        }
        return percentDecoded(bytes).flatMap { String(validating: $0, as: UTF8.self) }
    }

    /// The bytes `%XX` escapes stand for; nil for a bad escape.
    private static func percentDecoded(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "%") else {
                output.append(byte)
                index += 1
                continue
            }
            guard index + 2 < bytes.endIndex, let high = HexDigit.value(of: bytes[index + 1]),
                let low = HexDigit.value(of: bytes[index + 2])
            else { return nil }
            output.append(high << 4 | low)
            index += 3
        }
        return output
    }
}
