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

    /// Many users' updates, several per user, in one stream: the order of a user's updates decides what is stored.
    private static func stream(users: Int, updatesPerUser: Int) -> [UInt8] {
        var text = "<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>"
        for round in 0 ..< updatesPerUser {
            for user in 0 ..< users {
                text += "<presence from='u\(user)@example.com/r\(round % 3)'><status>\(round)</status></presence>"
                // Stanzas that count as ignored and rejected too, so that every outcome is compared.
                if user % 97 == 0 { text += "<message from='m@example.com'/><presence from='@bad'/>" }
            }
        }
        return Array(text.utf8)
    }

    @Test func appliedInTheBackgroundTheStorageEndsExactlyAsAppliedInline() throws {
        // More updates than the applier's queue holds, so that the parser runs ahead and waits.
        let bytes = Self.stream(users: 500, updatesPerUser: 30)
        let inline = DictionaryMemoryStorage()
        let background = DictionaryMemoryStorage()
        let inlineSession = IngestSession(storage: inline, clock: { time(1) })
        let backgroundSession = IngestSession(
            storage: background, clock: { time(1) }, applyingOn: ApplyPool(threads: 1))
        for start in stride(from: 0, to: bytes.count, by: 4096) {
            let chunk = bytes[start ..< min(start + 4096, bytes.count)]
            try inlineSession.feed(chunk)
            try backgroundSession.feed(chunk)
        }
        try inlineSession.finish()
        try backgroundSession.finish()
        #expect(backgroundSession.statistics == inlineSession.statistics)
        #expect(inlineSession.statistics.ignoredTotal > 0 && inlineSession.statistics.rejectedTotal > 0)
        #expect(background.count == 500)
        for user in 0 ..< 500 {
            let key = jid("u\(user)@example.com")
            #expect(background.lookup(key) == inline.lookup(key))
            #expect(background.get(key)?.status?.presence.details.status == "29", "the last update wins")
        }
    }

    @Test func appliedInTheBackgroundAStreamErrorStillKeepsEverythingBeforeIt() {
        let storage = DictionaryMemoryStorage()
        let session = IngestSession(storage: storage, applyingOn: ApplyPool(threads: 1))
        var bytes = Self.stream(users: 2_000, updatesPerUser: 1)
        bytes += Array("<presence from='lost@example.com/desk'><a></b>".utf8)
        #expect(throws: XMPPStreamError.self) { try session.feed(bytes) }
        // No wait: the feed that threw returns only once everything before the error is applied.
        #expect(storage.count == 2_000)
        #expect(storage.lookup(jid("lost@example.com")) == .unknown)
    }

    @Test func appliedInTheBackgroundWaitingMakesEverythingFedSoFarVisible() throws {
        let storage = DictionaryMemoryStorage()
        let session = IngestSession(storage: storage, applyingOn: ApplyPool(threads: 1))
        try session.feed(Self.stream(users: 1_000, updatesPerUser: 2))
        session.waitUntilApplied()
        #expect(storage.count == 1_000)
        #expect(storage.get(jid("u999@example.com"))?.status?.presence.details.status == "1")
    }

    @Test func appliedInTheBackgroundLargeStanzasArriveWhole() throws {
        // Large stanzas fill a batch by bytes long before its count: each must still arrive whole and in order.
        let status = String(repeating: "x", count: 30_000)  // over the 16 KiB a stanza keeps, within the storage's 64 KiB
        var text = ""
        for index in 0 ..< 60 {
            text += "<presence from='u\(index % 20)@example.com/desk'><status>\(index)\(status)</status></presence>"
            text += "<presence from='small\(index)@example.com/desk'/>"
        }
        let storage = DictionaryMemoryStorage()
        let session = IngestSession(
            storage: storage, decoder: PresenceDecoder(maximumStatusBytes: 40_000), applyingOn: ApplyPool(threads: 1))
        try session.feed(Array(text.utf8))
        try session.finish()
        #expect(session.statistics.presenceUpdates == 120)
        #expect(storage.count == 80)
        for user in 0 ..< 20 {
            let shown = try #require(storage.get(jid("u\(user)@example.com"))?.status?.presence.details.status)
            // Compared by its head and length: a failure must not print 30 KB.
            #expect(shown.prefix(2) == "\(40 + user)" && shown.utf8.count == 30_002, "the last of three updates")
        }
    }
}
