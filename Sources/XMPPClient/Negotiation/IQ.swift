import XMPPStream

/// The envelope of an `<iq/>` stanza (RFC 6120 §8.2.3): enough to match answers to requests and to answer the
/// server's own requests.
public struct IQ: Sendable, Hashable {
    public enum Kind: String, Sendable {
        case get, set, result, error
    }

    public var kind: Kind
    public var id: String
    public var from: String?
    /// The namespace of the first child, which says what a request is about.
    public var payloadNamespace: String?
    /// The first child's name.
    public var payloadName: String?

    /// Nil when the stanza is not a well-formed IQ.
    public init?(_ stanza: Stanza) {
        let root = stanza.root
        guard stanza.isElement(root, named: "iq", in: XMPPNamespace.client),
            let type = stanza.attribute("type", of: root).flatMap(Kind.init(rawValue:)),
            let id = stanza.attribute("id", of: root)
        else { return nil }
        kind = type
        self.id = id
        from = stanza.attribute("from", of: root)
        let payload = stanza.children(of: root).first {
            !stanza.isElement($0, named: "error", in: XMPPNamespace.client)
        }
        payloadNamespace = payload.map { stanza.namespace(of: $0) }
        payloadName = payload.map { stanza.localName(of: $0) }
    }

    /// The defined condition of an `error` IQ (`item-not-found`, `not-authorized`...), or nil.
    public static func errorCondition(of stanza: Stanza) -> String? {
        guard let error = stanza.firstChild(of: stanza.root, named: "error", in: XMPPNamespace.client) else {
            return nil
        }
        return stanza.children(of: error).first { stanza.localName(of: $0) != "text" }.map { stanza.localName(of: $0) }
    }

    public static let pingNamespace = "urn:xmpp:ping"
    public static let stanzaErrorNamespace = "urn:ietf:params:xml:ns:xmpp-stanzas"

    /// An empty `result` answering `request`.
    public static func result(answering request: IQ) -> [UInt8] {
        var writer = XMPPWriter()
        writer.iq(type: "result", id: request.id, to: request.from)
        return writer.bytes
    }

    /// `service-unavailable` answering a request this client does not handle (RFC 6120 §8.4 requires an answer).
    public static func serviceUnavailable(answering request: IQ) -> [UInt8] {
        var writer = XMPPWriter()
        writer.iq(type: "error", id: request.id, to: request.from) { writer in
            writer.element("error", attributes: [("type", "cancel")]) { writer in
                writer.element("service-unavailable", namespace: IQ.stanzaErrorNamespace)
            }
        }
        return writer.bytes
    }

    /// An XEP-0199 ping to the server.
    public static func ping(id: String, to: String? = nil) -> [UInt8] {
        var writer = XMPPWriter()
        writer.iq(type: "get", id: id, to: to) { writer in writer.element("ping", namespace: IQ.pingNamespace) }
        return writer.bytes
    }
}
