import Testing
import XMPPStream

@Suite("XMPP stream structure, namespaces and languages")
struct StreamStructureTests {
    @Test func prefixedStanzasResolveToTheirNamespace() {
        let recorder = StreamRecorder.parse(
            streamHeader
                + "<p:presence xmlns:p='jabber:client' id='x'><p:show>chat</p:show></p:presence></stream:stream>")
        let stanza = recorder.stanzas[0]
        #expect(stanza.isElement(stanza.root, named: "presence", in: "jabber:client"))
        #expect(
            stanza.firstChild(of: stanza.root, named: "show", in: "jabber:client").map { stanza.text(of: $0) } == "chat"
        )
    }

    @Test func prefixedStreamHeaderIsAccepted() {
        let recorder = StreamRecorder.parse(
            "<s:stream xmlns:s='http://etherx.jabber.org/streams' xmlns='jabber:server'><presence id='1'/></s:stream>")
        #expect(recorder.error == nil)
        #expect(recorder.headers.first?.contentNamespace == "jabber:server")
        #expect(recorder.summary == ["presence:1"])
        #expect(recorder.closed == 1)
    }

    @Test func componentStreamsAreAccepted() {
        let recorder = StreamRecorder.parse(
            "<stream:stream xmlns:stream='http://etherx.jabber.org/streams' xmlns='jabber:component:accept'><presence/></stream:stream>"
        )
        #expect(recorder.error == nil)
        #expect(recorder.stanzas.count == 1)
    }

    @Test func childrenKeepTheirOwnNamespaces() {
        let recorder = StreamRecorder.parse(
            "<presence><x xmlns='vcard-temp:x:update'><photo>abc</photo></x><delay xmlns='urn:xmpp:delay' stamp='2026-01-01T00:00:00Z'/></presence>"
        )
        let stanza = recorder.stanzas[0]
        let children = Array(stanza.children(of: stanza.root))
        #expect(children.count == 2)
        #expect(stanza.namespace(of: children[0]) == "vcard-temp:x:update")
        #expect(
            stanza.firstChild(of: children[0], named: "photo", in: "vcard-temp:x:update").map { stanza.text(of: $0) }
                == "abc")
        #expect(stanza.attribute("stamp", of: children[1]) == "2026-01-01T00:00:00Z")
    }

    @Test func xmlLangIsInheritedFromTheStreamHeaderAndTheStanza() {
        let recorder = StreamRecorder.parse(
            streamHeader + """
                <presence id='1'><status>Hello</status><status xml:lang='de'>Hallo</status></presence>\
                <presence id='2' xml:lang='fr'><status>Bonjour</status></presence></stream:stream>
                """)
        let first = recorder.stanzas[0]
        let statuses = Array(first.children(of: first.root))
        #expect(first.language(of: first.root) == "en")
        #expect(statuses.map { first.language(of: $0) } == ["en", "de"])
        let second = recorder.stanzas[1]
        #expect(second.children(of: second.root).map { second.language(of: $0) } == ["fr"])
    }

    @Test func implicitStreamsHaveNoLanguage() {
        let recorder = StreamRecorder.parse("<presence><status>x</status></presence>")
        let stanza = recorder.stanzas[0]
        #expect(stanza.language(of: stanza.root) == nil)
    }

    @Test func entitiesAndCharacterReferencesAreDecoded() {
        let recorder = StreamRecorder.parse(
            "<message a='&lt;&#x41;&gt;'><body>&amp;&apos;&quot;&#233;</body></message>")
        let stanza = recorder.stanzas[0]
        #expect(stanza.attribute("a", of: stanza.root) == "<A>")
        #expect(
            stanza.firstChild(of: stanza.root, named: "body", in: "jabber:client").map { stanza.text(of: $0) }
                == "&'\"é")
    }

    @Test func mixedContentKeepsEachElementsOwnText() {
        let recorder = StreamRecorder.parse("<message><body>one <b>two</b> three</body></message>")
        let stanza = recorder.stanzas[0]
        let body = stanza.firstChild(of: stanza.root, named: "body", in: "jabber:client")!
        #expect(stanza.text(of: body) == "one  three")
        #expect(stanza.firstChild(of: body, named: "b", in: "jabber:client").map { stanza.text(of: $0) } == "two")
    }

    @Test func anXMLDeclarationBeforeBareStanzasIsAccepted() {
        let recorder = StreamRecorder.parse(
            "<?xml version='1.0' encoding='UTF-8'?>\n<presence id='1'/>\n<presence id='2'/>\n")
        #expect(recorder.error == nil)
        #expect(recorder.summary == ["presence:1", "presence:2"])
    }

    @Test func aStreamWithoutItsClosingTagEndsCleanlyBetweenStanzas() {
        let recorder = StreamRecorder.parse(streamHeader + "<presence id='1'/>\n")
        #expect(recorder.error == nil)
        #expect(recorder.summary == ["presence:1"])
        #expect(recorder.closed == 1)
    }
}
