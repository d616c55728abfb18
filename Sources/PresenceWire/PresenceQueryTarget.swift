import PresenceModel

/// The users and policy a presence query's request target asks for: `/v1/presence/{jid}[?policy=…]` or
/// `/v1/presence?jid=…&jid=…[&policy=…]`, percent-decoded as the router decodes them, each JID parsed and
/// normalised (a full JID stands for its bare JID, as in the router).
///
/// Nil for any other path, and for a target it cannot decode exactly (a bad escape, bytes that are not UTF-8, a
/// JID that is not valid, a repeated policy): those go to the router, which answers or explains the error.
/// JIDs are parsed straight from the target's bytes, without a `String` per JID in between (a batch of a
/// thousand is most of a request's parsing).
public struct PresenceQueryTarget: Equatable, Sendable {
    public static let prefix: StaticString = "/v1/presence"
    /// Paths under the prefix that are routes of their own, not JIDs.
    public static let reservedSegments: [StaticString] = ["events"]

    public var jids: [BareJID] = []
    public var policy: String?

    public init(jids: [BareJID], policy: String?) {
        self.jids = jids
        self.policy = policy
    }

    public init?(_ target: String) {
        var target = target
        guard let parsed = target.withUTF8({ PresenceQueryTarget(utf8: $0) }) else { return nil }
        self = parsed
    }

    private init?(utf8 target: UnsafeBufferPointer<UInt8>) {
        let prefix = UnsafeBufferPointer(
            start: PresenceQueryTarget.prefix.utf8Start, count: PresenceQueryTarget.prefix.utf8CodeUnitCount)
        guard target.starts(with: prefix) else { return nil }
        let questionMark = target[prefix.count...].firstIndex(of: UInt8(ascii: "?")) ?? target.endIndex
        let path = target[prefix.count ..< questionMark]
        if !path.isEmpty {
            // `/{jid}`: one segment, no further slash (`/{jid}/badge.svg` is the badge route).
            let segment = path.dropFirst()
            guard path.first == UInt8(ascii: "/"), !segment.isEmpty, !segment.contains(UInt8(ascii: "/")),
                let jid = PresenceQueryTarget.withDecoded(
                    segment,
                    { utf8 -> BareJID? in
                        let reserved = PresenceQueryTarget.reservedSegments.contains {
                            utf8.elementsEqual(UnsafeBufferPointer(start: $0.utf8Start, count: $0.utf8CodeUnitCount))
                        }
                        return reserved ? nil : PresenceQueryTarget.jid(utf8)
                    })
            else { return nil }
            jids.append(jid)
        }
        guard questionMark != target.endIndex else { return }
        var start = questionMark + 1
        while start <= target.endIndex {
            let end = target[start...].firstIndex(of: UInt8(ascii: "&")) ?? target.endIndex
            let pair = target[start ..< end]
            let equals = pair.firstIndex(of: UInt8(ascii: "=")) ?? end
            let name = pair[..<equals]
            let value = equals == end ? pair[end...] : pair[(equals + 1)...]
            if name.elementsEqual("jid".utf8) {
                // The single-JID path takes its JID from the path only, as the router does.
                if path.isEmpty {
                    guard let jid = PresenceQueryTarget.withDecoded(value, PresenceQueryTarget.jid) else { return nil }
                    jids.append(jid)
                }
            } else if name.elementsEqual("policy".utf8) {
                guard policy == nil, let decoded = PresenceQueryTarget.decode(value) else { return nil }
                policy = decoded
            }
            start = end + 1
        }
    }

    /// The bare JID of a decoded JID; nil when it is not a valid JID (parsing validates UTF-8 where the text is not
    /// ASCII).
    private static func jid(_ utf8: UnsafeBufferPointer<UInt8>) -> BareJID? {
        try? JID(utf8: utf8).bare
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
