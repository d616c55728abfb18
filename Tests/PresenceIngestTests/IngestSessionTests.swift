import PresenceIngest
import PresenceStore
import PresenceTestSupport
import Testing
import XMPPStream

@Suite("An ingest session drives bytes → parser → decoder → storage for every source")
struct IngestSessionTests {
    @Test func eachPresenceIsAppliedAsSoonAsItsStanzaIsComplete() throws {
        let storage = DictionaryMemoryStorage()
        let session = IngestSession(storage: storage, clock: { time(7) })
        try session.feed(Array("<presence from='a@example.com/desk'><show>away</show></pres".utf8))
        #expect(storage.lookup(jid("a@example.com")) == .unknown, "half a stanza applies nothing")
        try session.feed(Array("ence><presence from='b@example.com/desk'/>".utf8))
        #expect(storage.get(jid("a@example.com"))?.status?.presence.details.show == .away)
        #expect(storage.get(jid("a@example.com"))?.status?.since == time(7), "the session's clock stamps the update")
        #expect(storage.count == 2)
        try session.finish()
        #expect(session.statistics.presenceUpdates == 2)
    }

    @Test func aClientSeesEveryEventAndTheStoreSeesOnlyPresences() throws {
        let storage = LRUMemoryStorage()
        let session = IngestSession(storage: storage)
        var events: [String] = []
        var applied: [BareJID] = []
        session.onEvent = { event in
            switch event {
            case .streamOpened(let header): events.append("open \(header.from ?? "-")")
            case .stanza(let stanza): events.append(stanza.localName(of: stanza.root))
            case .streamClosed: events.append("close")
            }
        }
        session.onApplied = { update, _ in applied.append(update.from.bare) }
        try session.feed(
            Array(
                """
                <stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' from='example.com'>\
                <iq type='result' id='roster'><query xmlns='jabber:iq:roster'/></iq>\
                <presence from='a@example.com/desk'/><message from='b@example.com'/></stream:stream>
                """.utf8))
        try session.finish()
        #expect(events == ["open example.com", "iq", "presence", "message", "close"])
        #expect(applied == [jid("a@example.com")])
        #expect(storage.count == 1)
        #expect(session.header?.from == "example.com")
    }

    @Test func aStreamErrorKeepsEverythingAppliedBeforeIt() {
        let storage = NSCacheMemoryStorage()
        let session = IngestSession(storage: storage)
        #expect(throws: XMPPStreamError.self) {
            try session.feed(
                Array("<presence from='kept@example.com/desk'/><presence from='lost@example.com/desk'><a></b>".utf8))
        }
        #expect(session.error?.condition == .notWellFormed)
        #expect(storage.get(jid("kept@example.com")) != nil)
        #expect(storage.lookup(jid("lost@example.com")) == .unknown)
        #expect(session.statistics.presenceUpdates == 1)
    }
}
