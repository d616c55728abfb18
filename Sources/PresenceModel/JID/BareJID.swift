/// A user's address without a resource (`localpart@domainpart` or `domainpart`), normalised to lower case.
///
/// The key every storage uses: two spellings that differ only in the case of the localpart or domain are the
/// same user.
public struct BareJID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The normalised form, `alice@example.com`.
    public let rawValue: String

    /// Creates a bare JID from an already-normalised string; used by the parser.
    package init(normalized: String) { rawValue = normalized }

    /// Parses and normalises a bare JID; a resource is refused (use ``JID`` for full JIDs).
    public init(_ string: String) throws(JIDError) {
        let jid = try JID(string)
        guard jid.resource == nil else { throw .unexpectedResource }
        self = jid.bare
    }

    /// The part before `@`, if any.
    public var localpart: Substring? {
        guard let at = rawValue.firstIndex(of: "@") else { return nil }
        return rawValue[..<at]
    }

    /// The part after `@` (the whole JID when there is no localpart).
    public var domainpart: Substring {
        guard let at = rawValue.firstIndex(of: "@") else { return rawValue[...] }
        return rawValue[rawValue.index(after: at)...]
    }

    public var description: String { rawValue }

    public static func < (lhs: BareJID, rhs: BareJID) -> Bool { lhs.rawValue < rhs.rawValue }
}
