/// What a `<stream:stream>` header declared.
///
/// A stream without a header (a file of bare stanzas) gets an implicit header with ``isImplicit`` set and the
/// parser's configured default namespace.
public struct StreamHeader: Hashable, Sendable {
    /// The default namespace of the stream's content: `jabber:client`, `jabber:server` or `jabber:component:accept`.
    public var contentNamespace: String
    /// The stream's `xml:lang`, inherited by every stanza that does not set its own.
    public var language: String?
    public var from: String?
    public var to: String?
    public var id: String?
    public var version: String?
    /// True when the input had no header and the parser supplied one.
    public var isImplicit: Bool

    public init(
        contentNamespace: String, language: String? = nil, from: String? = nil, to: String? = nil,
        id: String? = nil, version: String? = nil, isImplicit: Bool = false
    ) {
        self.contentNamespace = contentNamespace
        self.language = language
        self.from = from
        self.to = to
        self.id = id
        self.version = version
        self.isImplicit = isImplicit
    }
}
