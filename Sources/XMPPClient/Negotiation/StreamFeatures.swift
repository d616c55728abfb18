import XMPPStream

/// What a server's `<stream:features>` offers (RFC 6120 §4.3.2), as far as a client logging in cares.
public struct StreamFeatures: Sendable, Hashable {
    public static let tlsNamespace = "urn:ietf:params:xml:ns:xmpp-tls"
    public static let bindNamespace = "urn:ietf:params:xml:ns:xmpp-bind"
    public static let sessionNamespace = "urn:ietf:params:xml:ns:xmpp-session"

    /// `<starttls/>` is offered.
    public var startTLS: Bool
    /// `<starttls><required/></starttls>`: the server will not go on without it.
    public var startTLSRequired: Bool
    /// The SASL mechanisms, in the server's order.
    public var mechanisms: [String]
    /// Resource binding is offered (after authentication).
    public var bind: Bool
    /// The legacy session establishment (RFC 3921) is offered and not marked optional: it must be done.
    public var sessionRequired: Bool

    public init(_ features: Stanza) throws(XMPPClientError) {
        let root = features.root
        guard features.isElement(root, named: "features", in: XMPPNamespace.streams) else {
            throw .protocolViolation("expected <stream:features>, got <\(features.localName(of: root))>")
        }
        let tls = features.firstChild(of: root, named: "starttls", in: StreamFeatures.tlsNamespace)
        startTLS = tls != nil
        startTLSRequired =
            tls.map { features.firstChild(of: $0, named: "required", in: StreamFeatures.tlsNamespace) != nil }
            ?? false
        mechanisms = SASLNegotiation.offeredMechanisms(in: features)
        bind = features.firstChild(of: root, named: "bind", in: StreamFeatures.bindNamespace) != nil
        let session = features.firstChild(of: root, named: "session", in: StreamFeatures.sessionNamespace)
        sessionRequired =
            session.map { features.firstChild(of: $0, named: "optional", in: StreamFeatures.sessionNamespace) == nil }
            ?? false
    }
}
