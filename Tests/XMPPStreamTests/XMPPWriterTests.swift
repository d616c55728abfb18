import Testing
import XMPPStream

@Suite("The XMPP writer escapes everything and the parser reads back what it wrote")
struct XMPPWriterTests {
    /// Parses `bytes` and returns the header and the stanzas.
    func parse(_ bytes: [UInt8]) throws -> (StreamHeader?, [Stanza], closed: Bool) {
        let parser = XMPPStreamParser()
        var header: StreamHeader?
        var stanzas: [Stanza] = []
        var closed = false
        let record: (XMPPStreamEvent) -> Void = { event in
            switch event {
            case .streamOpened(let opened): header = opened
            case .stanza(let stanza): stanzas.append(stanza)
            case .streamClosed: closed = true
            }
        }
        try parser.feed(bytes, record)
        try parser.finish(record)
        return (header, stanzas, closed)
    }

    @Test func aPresenceWithHostileTextRoundTripsThroughTheParser() throws {
        let status = "Tom & Jerry <b>'quoted'</b> \"double\" ✓"
        var writer = XMPPWriter()
        writer.openStream(to: "example.com", id: "s'1", language: "en")
        writer.presence(from: "a@example.com/desk'<>", show: "dnd", status: status, priority: -5)
        writer.closeStream()
        let (header, stanzas, closed) = try parse(writer.bytes)
        #expect(header?.to == "example.com")
        #expect(header?.id == "s'1")
        #expect(header?.language == "en")
        #expect(header?.contentNamespace == XMPPNamespace.client)
        #expect(closed)
        let stanza = try #require(stanzas.first)
        #expect(stanza.attribute("from", of: stanza.root) == "a@example.com/desk'<>")
        let texts = stanza.children(of: stanza.root).map { stanza.text(of: $0) }
        #expect(texts == ["dnd", status, "-5"])
    }

    @Test func emptyElementsAreSelfClosingAndNilAttributesLeftOut() {
        var writer = XMPPWriter()
        writer.presence(type: "probe", to: "b@example.com")
        writer.iq(type: "get", id: "roster-1") { writer in
            writer.element("query", namespace: "jabber:iq:roster")
        }
        #expect(
            String(decoding: writer.bytes, as: UTF8.self)
                == "<presence type='probe' to='b@example.com'/><iq type='get' id='roster-1'><query xmlns='jabber:iq:roster'/></iq>"
        )
    }

    @Test func aStreamErrorNamesItsConditionAndPositionAndParses() throws {
        let parser = XMPPStreamParser()
        var failure: XMPPStreamError?
        do throws(XMPPStreamError) { try parser.feed(Array("<presence><show>away</sho>".utf8)) { _ in } } catch {
            failure = error
        }
        var writer = XMPPWriter()
        writer.openStream()
        writer.streamError(for: try #require(failure))
        writer.closeStream()
        let text = String(decoding: writer.bytes, as: UTF8.self)
        #expect(
            text.contains(
                "<stream:error><not-well-formed xmlns='urn:ietf:params:xml:ns:xmpp-streams'/><text xmlns='urn:ietf:params:xml:ns:xmpp-streams'>"
            ))
        #expect(text.contains("at line 1, column"))
        let (_, stanzas, closed) = try parse(writer.bytes)
        #expect(stanzas.count == 1, "the stream error is one well-formed element")
        #expect(closed)
    }
}
