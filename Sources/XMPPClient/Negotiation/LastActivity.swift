import XMPPStream

/// XEP-0012 Last Activity, asked of a contact's bare JID: the contact's server answers on the contact's behalf
/// with the seconds since the contact's last session ended, `0` while it has one.
///
/// It is the one question about a contact that the server itself answers: ejabberd's `mod_last` and Prosody's
/// `mod_lastactivity` (when loaded) answer it, where a presence probe of a contact without an available resource
/// may be answered with nothing at all (RFC 6121 §4.3.2 allows both).
public enum LastActivity {
    public static let namespace = "jabber:iq:last"

    /// A `get` to `contact` (a bare JID).
    public static func request(id: String, to contact: String) -> [UInt8] {
        var writer = XMPPWriter()
        writer.iq(type: "get", id: id, to: contact) { writer in writer.element("query", namespace: namespace) }
        return writer.bytes
    }

    /// What a result says: the seconds since the contact's last session ended (`0`: a session is open now).
    /// Nil when the stanza is not a last-activity result with a well-formed `seconds`.
    public static func seconds(in stanza: Stanza) -> Int? {
        guard let query = stanza.firstChild(of: stanza.root, named: "query", in: namespace),
            let text = stanza.attribute("seconds", of: query), let seconds = Int(text), seconds >= 0
        else { return nil }
        return seconds
    }
}
