/// Why a stream was ended, as an XMPP stream-error condition with the place in the input it happened.
///
/// After an error the parser accepts no more input; every event delivered before the error stays delivered.
public struct XMPPStreamError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The RFC 6120 §4.9.3 stream-error conditions the parser can raise.
    public enum Condition: String, Hashable, Sendable, CaseIterable {
        /// Prefix used without a namespace declaration.
        case badNamespacePrefix = "bad-namespace-prefix"
        /// The stream or its content is in the wrong namespace.
        case invalidNamespace = "invalid-namespace"
        /// The input is not well-formed XML, or it ended inside a stanza or a tag.
        case notWellFormed = "not-well-formed"
        /// A limit of ``XMPPStreamLimits`` was exceeded.
        case policyViolation = "policy-violation"
        /// A construct RFC 6120 §11.1 forbids: DTD, entity declaration or reference, comment, processing instruction.
        case restrictedXML = "restricted-xml"
        /// An encoding other than UTF-8 was declared.
        case unsupportedEncoding = "unsupported-encoding"
    }

    public var condition: Condition
    /// A sentence for people saying what was wrong.
    public var message: String
    /// Where in the input the problem is.
    public var position: SourcePosition
    /// For `policy-violation`, the limit that was exceeded.
    public var limit: XMPPStreamLimits.Kind?

    public init(
        _ condition: Condition, _ message: String, at position: SourcePosition, limit: XMPPStreamLimits.Kind? = nil
    ) {
        self.condition = condition
        self.message = message
        self.position = position
        self.limit = limit
    }

    public var description: String { "\(condition.rawValue) at \(position): \(message)" }
}
