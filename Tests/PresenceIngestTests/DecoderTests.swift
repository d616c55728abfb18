import PresenceIngest
import PresenceStore
import Testing
import XMPPStream

/// Decodes every stanza of `input` (bare stanzas or a full stream).
func dispositions(_ input: String) -> [StanzaDisposition] {
    let parser = XMPPStreamParser()
    var stanzas: [Stanza] = []
    let collect: (XMPPStreamEvent) -> Void = { if case .stanza(let stanza) = $0 { stanzas.append(stanza) } }
    do throws(XMPPStreamError) {
        try parser.feed(Array(input.utf8), collect)
        try parser.finish(collect)
    } catch {
        Issue.record("unexpected stream error \(error)")
    }
    return stanzas.map { PresenceDecoder().decode($0) }
}

func update(_ input: String) throws -> PresenceUpdate {
    let results = dispositions(input)
    guard case .update(let update)? = results.first else {
        Issue.record("expected an update, got \(results)")
        throw CancellationError()
    }
    return update
}

@Suite("Presence stanzas decode by RFC 6121 and XEP-0203")
struct DecoderTests {
    @Test func aPresenceWithoutTypeIsAvailable() throws {
        let decoded = try update("<presence from='alice@example.com/desk'/>")
        #expect(decoded.availability == .available)
        #expect(decoded.from == (try JID("alice@example.com/desk")))
        #expect(decoded.details == PresenceDetails())
        #expect(decoded.delayedAt == nil)
    }

    @Test func unavailableMeansTheResourceIsGone() throws {
        let decoded = try update(
            "<presence from='alice@example.com/desk' type='unavailable'><status>Gone home</status></presence>")
        #expect(decoded.availability == .unavailable)
        #expect(decoded.details.status == "Gone home")
    }

    @Test(arguments: [
        ("subscribe", IgnoredStanzaReason.subscribe), ("subscribed", .subscribed), ("unsubscribe", .unsubscribe),
        ("unsubscribed", .unsubscribed), ("probe", .probe), ("error", .error),
    ])
    func subscriptionProbeAndErrorPresencesNeverChangeAStatus(type: String, reason: IgnoredStanzaReason) {
        #expect(dispositions("<presence from='a@b/c' type='\(type)'/>") == [.ignored(reason)])
    }

    @Test func messagesIQsAndOtherElementsAreIgnored() {
        #expect(
            dispositions(
                "<message from='a@b/c'><body>x</body></message><iq type='get' id='1'/><foo xmlns='urn:x'/><presence xmlns='urn:not-xmpp' from='a@b'/>"
            )
                == [.ignored(.message), .ignored(.iq), .ignored(.other), .ignored(.other)])
    }

    @Test func aMissingOrInvalidFromIsRejectedWithItsReason() {
        #expect(
            dispositions("<presence/><presence from='@example.com'/><presence from='a b@example.com'/>")
                == [
                    .rejected(.missingFrom), .rejected(.invalidFrom(.emptyLocalpart)),
                    .rejected(.invalidFrom(.forbiddenCharacterInLocalpart)),
                ])
    }

    @Test func anUnknownTypeIsRejected() {
        #expect(dispositions("<presence from='a@b/c' type='invisible'/>") == [.rejected(.unknownType)])
    }

    @Test(arguments: [("chat", PresenceShow.chat), ("away", .away), ("xa", .xa), ("dnd", .dnd)])
    func showValuesAreDecoded(text: String, show: PresenceShow) throws {
        #expect(try update("<presence from='a@b/c'><show>\(text)</show></presence>").details.show == show)
        #expect(try update("<presence from='a@b/c'><show> \(text)\n</show></presence>").details.show == show)
    }

    @Test func anUnknownShowIsPlainAvailable() throws {
        #expect(try update("<presence from='a@b/c'><show>busy</show></presence>").details.show == nil)
    }

    @Test func showInAnotherNamespaceIsNotTheShow() throws {
        #expect(try update("<presence from='a@b/c'><show xmlns='urn:other'>dnd</show></presence>").details.show == nil)
    }

    @Test(arguments: [
        ("5", Int8(5)), ("-1", -1), ("+7", 7), ("127", 127), ("128", 127), ("-129", -128),
        ("99999999999999999999", 127),
        ("-99999999999999999999", -128), ("abc", 0), ("1.5", 0), ("", 0), (" 3 ", 3), ("-", 0),
    ])
    func priorityIsAnIntegerClampedToInt8AndZeroOtherwise(text: String, priority: Int8) throws {
        #expect(
            try update("<presence from='a@b/c'><priority>\(text)</priority></presence>").details.priority == priority)
    }

    @Test func anAbsentPriorityIsZero() throws {
        #expect(try update("<presence from='a@b/c'/>").details.priority == 0)
    }

    @Test func theStatusInTheStanzaLanguageWins() throws {
        let stream =
            "<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' xml:lang='de'>"
        let decoded = try update(
            stream + "<presence from='a@b/c'><status xml:lang='en'>Lunch</status><status>Mittag</status></presence>")
        #expect(decoded.details.status == "Mittag")
        let stanzaLanguage = try update(
            "<presence from='a@b/c' xml:lang='fr'><status xml:lang='en'>Lunch</status><status xml:lang='fr'>Déjeuner</status></presence>"
        )
        #expect(stanzaLanguage.details.status == "Déjeuner")
        let caseInsensitive = try update(
            "<presence from='a@b/c' xml:lang='en-GB'><status xml:lang='de'>Mittag</status><status xml:lang='EN-gb'>Lunch</status></presence>"
        )
        #expect(caseInsensitive.details.status == "Lunch")
    }

    @Test func thenTheStatusWithoutLanguageThenTheFirst() throws {
        let unlabelled = try update(
            "<presence from='a@b/c'><status xml:lang='de'>Mittag</status><status>Lunch</status></presence>")
        #expect(unlabelled.details.status == "Lunch")
        let first = try update(
            "<presence from='a@b/c'><status xml:lang='de'>Mittag</status><status xml:lang='fr'>Déjeuner</status></presence>"
        )
        #expect(first.details.status == "Mittag")
    }

    @Test func theDelayStampIsTheUpdatesTime() throws {
        let decoded = try update(
            "<presence from='a@b/c'><delay xmlns='urn:xmpp:delay' from='b' stamp='2026-11-22T08:00:00Z'/></presence>")
        #expect(decoded.delayedAt == PresenceTime(xmppTimestamp: "2026-11-22T08:00:00Z"))
        let legacy = try update(
            "<presence from='a@b/c'><x xmlns='jabber:x:delay' stamp='20261122T08:00:00'/></presence>")
        #expect(legacy.delayedAt == PresenceTime(xmppTimestamp: "2026-11-22T08:00:00Z"))
        let invalid = try update("<presence from='a@b/c'><delay xmlns='urn:xmpp:delay' stamp='soon'/></presence>")
        #expect(invalid.delayedAt == nil)
    }

    @Test func attendanceIsDecoded() throws {
        for state in Attendance.allCases {
            let decoded = try update(
                "<presence from='a@b/c'><attendance xmlns='urn:presence-store:attendance' state='\(state.rawValue)'/></presence>"
            )
            #expect(decoded.details.attendance == state)
        }
        #expect(
            try update(
                "<presence from='a@b/c'><attendance xmlns='urn:presence-store:attendance' state='napping'/></presence>"
            ).details.attendance == nil)
        #expect(
            try update("<presence from='a@b/c'><attendance state='vacation'/></presence>").details.attendance == nil)
    }

    @Test func prefixedPresenceCountsAsPresence() throws {
        let decoded = try update("<p:presence xmlns:p='jabber:client' from='a@b/c'><p:show>dnd</p:show></p:presence>")
        #expect(decoded.details.show == .dnd)
    }

    @Test func serverAndComponentStreamsCarryPresenceToo() throws {
        for namespace in ["jabber:server", "jabber:component:accept"] {
            let stream = "<stream:stream xmlns='\(namespace)' xmlns:stream='http://etherx.jabber.org/streams'>"
            #expect(try update(stream + "<presence from='a@b/c'><show>xa</show></presence>").details.show == .xa)
        }
    }
}
