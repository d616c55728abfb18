/// Namespace names the XMPP stream layer needs to recognise (RFC 6120 §4.8, §11.2).
public enum XMPPNamespace {
    /// The namespace of `<stream:stream>`, `<stream:features>` and `<stream:error>`.
    public static let streams = "http://etherx.jabber.org/streams"
    /// Default content namespace of client-to-server streams.
    public static let client = "jabber:client"
    /// Default content namespace of server-to-server streams.
    public static let server = "jabber:server"
    /// Default content namespace of XEP-0114 component streams.
    public static let componentAccept = "jabber:component:accept"
    /// Namespace of `<stream:error>` conditions.
    public static let streamErrors = "urn:ietf:params:xml:ns:xmpp-streams"
    /// The namespace bound to the `xml` prefix; `xml:lang` lives here.
    public static let xml = "http://www.w3.org/XML/1998/namespace"

    /// The content namespaces a stream header may declare as its default namespace.
    public static let contentNamespaces: Set<String> = [client, server, componentAccept]
}
