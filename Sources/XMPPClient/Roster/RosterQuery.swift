import PresenceModel
import XMPPStream

/// The `jabber:iq:roster` protocol (RFC 6121 §2): the request for the whole roster, and reading the items of a
/// roster result or push.
public enum RosterQuery {
    public static let namespace = "jabber:iq:roster"

    /// `<iq type='get'><query xmlns='jabber:iq:roster'/></iq>`.
    public static func request(id: String) -> [UInt8] {
        var writer = XMPPWriter()
        writer.iq(type: "get", id: id) { writer in writer.element("query", namespace: RosterQuery.namespace) }
        return writer.bytes
    }

    /// The items of a roster result or push. Items whose JID is not a valid bare JID are skipped and counted.
    public static func items(in stanza: Stanza) -> (items: [RosterItem], skipped: Int) {
        guard let query = stanza.firstChild(of: stanza.root, named: "query", in: namespace) else { return ([], 0) }
        var items: [RosterItem] = []
        var skipped = 0
        for element in stanza.children(of: query) where stanza.isElement(element, named: "item", in: namespace) {
            guard let text = stanza.attribute("jid", of: element), let jid = try? BareJID(text) else {
                skipped += 1
                continue
            }
            let subscription = stanza.attribute("subscription", of: element).flatMap(RosterItem.Subscription.init)
            let groups = stanza.children(of: element)
                .filter { stanza.isElement($0, named: "group", in: namespace) }
                .map { stanza.text(of: $0) }
            items.append(
                RosterItem(
                    jid: jid, subscription: subscription ?? .none, name: stanza.attribute("name", of: element),
                    groups: groups))
        }
        return (items, skipped)
    }
}
