/// Resource limits a stream must respect; a stream that exceeds one ends with `policy-violation`.
///
/// The defaults follow what public XMPP servers enforce on client streams: Prosody and ejabberd both cap a
/// stanza at 256 KiB.
public struct XMPPStreamLimits: Hashable, Sendable {
    /// The largest stanza, counted in raw input bytes from its `<` to the end of its end tag.
    ///
    /// Enforced while the bytes arrive: a stanza (or a single start tag with a huge attribute) is rejected as
    /// soon as it is one byte over, before the parser has buffered more of it.
    public var maxStanzaBytes: Int
    /// The deepest element nesting inside a stanza; the stanza element itself is depth 1.
    public var maxElementDepth: Int
    /// The most elements one stanza may contain, not counting the stanza element itself.
    public var maxChildElements: Int

    public static let defaultMaxStanzaBytes = 256 * 1024
    public static let defaultMaxElementDepth = 32
    public static let defaultMaxChildElements = 1024

    public init(
        maxStanzaBytes: Int = defaultMaxStanzaBytes,
        maxElementDepth: Int = defaultMaxElementDepth,
        maxChildElements: Int = defaultMaxChildElements
    ) {
        // Byte ranges inside a stanza are stored as 32-bit values; clamp to keep them representable.
        self.maxStanzaBytes = min(max(maxStanzaBytes, 1), Int(Int32.max))
        self.maxElementDepth = max(maxElementDepth, 1)
        self.maxChildElements = max(maxChildElements, 0)
    }

    /// Names the limit a `policy-violation` tripped.
    public enum Kind: String, Hashable, Sendable {
        case stanzaBytes = "max-stanza-bytes"
        case elementDepth = "max-element-depth"
        case childElements = "max-child-elements"
    }
}
