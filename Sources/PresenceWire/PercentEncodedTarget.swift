import PresenceModel

/// The one reading of the percent-encoded parts of a request target (RFC 3986 §2.1): every route that takes a JID
/// or a parameter from a target (a query, a change stream, a badge) decodes it here, so a JID means the same and a
/// bad escape is refused the same way on each. A `+` stays a `+`: RFC 3986 gives it no meaning, and it is valid in a
/// JID's localpart.
public enum PercentEncodedTarget {
    /// The bare JID a percent-encoded part stands for (a full JID stands for its bare JID), or why it is none.
    public enum JIDReading: Equatable, Sendable {
        case jid(BareJID)
        case malformed(ErrorReport)
    }

    /// The bare JID `text`, percent-encoded, stands for.
    public static func jid(_ text: String) -> JIDReading {
        var text = text
        return text.withUTF8 { jid($0[...]) }
    }

    /// `text` percent-decoded into UTF-8 text; nil for a bad escape or bytes that are not UTF-8.
    public static func decode(_ text: String) -> String? {
        var text = text
        return text.withUTF8 { decode($0[...]) }
    }

    /// The query's `name=value` pairs in order, both still percent-encoded (a pair without `=` has an empty
    /// value): the caller decodes each value as what it is, a JID or text.
    public static func queryPairs(of target: String) -> [(name: Substring, value: Substring)] {
        guard let questionMark = target.firstIndex(of: "?") else { return [] }
        return target[target.index(after: questionMark)...].split(separator: "&", omittingEmptySubsequences: false)
            .map { pair in
                guard let equals = pair.firstIndex(of: "=") else { return (pair, pair[pair.endIndex...]) }
                return (pair[..<equals], pair[pair.index(after: equals)...])
            }
    }

    static func jid(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> JIDReading {
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

    static func decode(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> String? {
        guard bytes.contains(UInt8(ascii: "%")) else {
            return String(validating: UnsafeBufferPointer(rebasing: bytes), as: UTF8.self)
        }
        return percentDecoded(bytes).flatMap { String(validating: $0, as: UTF8.self) }
    }

    /// Calls `body` with the bytes a percent-encoded slice stands for, copying only when it has escapes; nil for a
    /// bad escape.
    private static func withDecoded<R>(
        _ bytes: Slice<UnsafeBufferPointer<UInt8>>, _ body: (UnsafeBufferPointer<UInt8>) -> R?
    ) -> R? {
        guard bytes.contains(UInt8(ascii: "%")) else { return body(UnsafeBufferPointer(rebasing: bytes)) }
        return percentDecoded(bytes)?.withUnsafeBufferPointer(body)
    }

    /// The bytes `%XX` escapes stand for; nil for a bad escape (a `%` without two hex digits after it).
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
