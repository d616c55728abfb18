/// Writes XMPP: the stream header and its end, stanzas and stream errors, with every attribute and text escaped.
///
/// The one place that turns values into XMPP bytes, shared by the service (stream errors to feeders), the client
/// connection to an XMPP server (its header, IQs and presences) and the tests. It knows XML and XMPP, nothing
/// about presence storage: `show`, `status` and `priority` are the stanza's own strings and numbers.
public struct XMPPWriter {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    /// A stanza attribute: a name and a value, left out when the value is nil.
    public typealias Attribute = (name: String, value: String?)

    // MARK: The stream

    /// `<?xml version='1.0'?><stream:stream ...>` (RFC 6120 §4.7), left open.
    public mutating func openStream(
        namespace: String = XMPPNamespace.client, to: String? = nil, from: String? = nil, id: String? = nil,
        language: String? = nil, version: String? = "1.0"
    ) {
        append("<?xml version='1.0'?><stream:stream")
        attributes([
            ("xmlns", namespace), ("xmlns:stream", XMPPNamespace.streams), ("to", to), ("from", from), ("id", id),
            ("xml:lang", language), ("version", version),
        ])
        append(">")
    }

    /// `</stream:stream>`.
    public mutating func closeStream() { append("</stream:stream>") }

    /// `<stream:error>` with its condition and a readable text (RFC 6120 §4.9). The stream must be closed after it.
    public mutating func streamError(_ condition: String, text: String? = nil) {
        append("<stream:error>")
        element(condition, namespace: XMPPNamespace.streamErrors)
        if let text { element("text", namespace: XMPPNamespace.streamErrors, text: text) }
        append("</stream:error>")
    }

    /// `<stream:error>` for a parse error, with its position in the text.
    public mutating func streamError(for error: XMPPStreamError) {
        streamError(
            error.condition.rawValue,
            text: "\(error.message) at line \(error.position.line), column \(error.position.column)")
    }

    // MARK: Stanzas

    /// `<presence/>` (RFC 6121 §4.7): no `type` is available; `priority` is written when given.
    public mutating func presence(
        type: String? = nil, to: String? = nil, from: String? = nil, id: String? = nil, show: String? = nil,
        status: String? = nil, priority: Int? = nil, children: ((inout XMPPWriter) -> Void)? = nil
    ) {
        let hasChildren = show != nil || status != nil || priority != nil || children != nil
        element("presence", attributes: [("type", type), ("to", to), ("from", from), ("id", id)]) { writer in
            guard hasChildren else { return }
            if let show { writer.element("show", text: show) }
            if let status { writer.element("status", text: status) }
            if let priority { writer.element("priority", text: String(priority)) }
            children?(&writer)
        }
    }

    /// `<iq type='get|set|result|error' id='...'>` with its payload (RFC 6120 §8.2.3).
    public mutating func iq(
        type: String, id: String, to: String? = nil, from: String? = nil,
        payload: ((inout XMPPWriter) -> Void)? = nil
    ) {
        element("iq", attributes: [("type", type), ("id", id), ("to", to), ("from", from)], children: payload)
    }

    /// Any element: `<name xmlns='...' a='...'>text or children</name>`, or `<name .../>` when empty.
    public mutating func element(
        _ name: String, namespace: String? = nil, attributes list: [Attribute] = [], text: String? = nil,
        children: ((inout XMPPWriter) -> Void)? = nil
    ) {
        append("<")
        append(name)
        attributes([("xmlns", namespace)] + list)
        let start = bytes.count
        append(">")
        if let text { escape(text, quote: false) }
        children?(&self)
        if bytes.count == start + 1 {
            bytes[start] = UInt8(ascii: "/")
            append(">")
        } else {
            append("</")
            append(name)
            append(">")
        }
    }

    // MARK: Escaping

    /// `text` escaped for an attribute value in single quotes (`&`, `<`, `>`, `'`, `"`).
    public static func escaped(_ text: String) -> String {
        var writer = XMPPWriter()
        writer.escape(text, quote: true)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    private mutating func attributes(_ list: [Attribute]) {
        for (name, value) in list {
            guard let value else { continue }
            append(" ")
            append(name)
            append("='")
            escape(value, quote: true)
            append("'")
        }
    }

    private mutating func escape(_ text: String, quote: Bool) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "&"): append("&amp;")
            case UInt8(ascii: "<"): append("&lt;")
            case UInt8(ascii: ">"): append("&gt;")
            case UInt8(ascii: "'") where quote: append("&apos;")
            case UInt8(ascii: "\"") where quote: append("&quot;")
            default: bytes.append(byte)
            }
        }
    }

    private mutating func append(_ text: String) { bytes.append(contentsOf: text.utf8) }
}
