import Testing
import XMPPStream

@Suite("Bad input ends the stream with a typed error at a position, keeping what came before")
struct StreamErrorTests {
    @Test(arguments: [
        ("<!DOCTYPE stream>", "DOCTYPE"),
        ("<!DOCTYPE s [<!ENTITY e 'x'>]>", "internal subset"),
        (
            "<!DOCTYPE lolz [<!ENTITY lol 'lol'><!ENTITY lol2 '&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;'>]><lolz>&lol2;</lolz>",
            "billion laughs"
        ),
        ("<!-- hello -->", "comment"),
        ("<?php echo 1; ?>", "processing instruction"),
    ])
    func restrictedXMLBeforeTheStreamIsRefused(input: String, what: String) {
        let recorder = StreamRecorder.parse(input)
        #expect(recorder.error?.condition == .restrictedXML, "\(what)")
        #expect(recorder.stanzas.isEmpty)
    }

    @Test(arguments: [
        "<presence/><!-- hidden -->",
        "<presence/><?pi data?>",
        "<presence><status>&custom;</status></presence>",
        "<presence/><presence><!--c--></presence>",
    ])
    func restrictedXMLInsideTheStreamEndsItAfterTheEarlierStanzas(input: String) {
        let recorder = StreamRecorder.parse(input)
        #expect(recorder.error?.condition == .restrictedXML)
        #expect(recorder.stanzas.count <= 1)
        if input.hasPrefix("<presence/>") { #expect(recorder.stanzas.count == 1) }
    }

    @Test func entitiesAreNeverExpandedEvenWhenDeclaredInsideAStream() {
        let recorder = StreamRecorder.parse(streamHeader + "<presence id='1'/><!DOCTYPE x [<!ENTITY a 'b'>]>")
        #expect(recorder.error?.condition == .notWellFormed || recorder.error?.condition == .restrictedXML)
        #expect(recorder.summary == ["presence:1"])
    }

    @Test func malformedXMLIsNotWellFormedWithLineColumnAndOffset() {
        let input = "<presence id='1'/>\n<presence id='2'>\n  <show>away</shw>\n</presence>"
        let recorder = StreamRecorder.parse(input)
        let error = try! #require(recorder.error)
        #expect(error.condition == .notWellFormed)
        #expect(error.position.line == 3)
        #expect(error.position.column == 15)
        // Line 3 starts at byte 37; expat points at the mismatched name after "</".
        #expect(error.position.byteOffset == 37 + 14)
        #expect(recorder.summary == ["presence:1"])
    }

    @Test func positionsInImplicitStreamsIgnoreTheSyntheticHeader() {
        let recorder = StreamRecorder.parse("<presence id='1'/><presence id='2' a='1' a='2'/>")
        let error = try! #require(recorder.error)
        #expect(error.condition == .notWellFormed)
        #expect(error.position.line == 1)
        // The duplicate `a`, as if the input had been parsed without the synthetic header in front.
        #expect(error.position.column == 42)
        #expect(error.position.byteOffset == 41)
    }

    @Test func theParserStopsAfterAnErrorAndKeepsReportingIt() {
        var recorder = StreamRecorder()
        recorder.feed("<presence id='1'/><oops<presence id='2'/>")
        let first = try! #require(recorder.error)
        recorder.error = nil
        recorder.feed("<presence id='3'/>")
        #expect(recorder.error == first)
        recorder.error = nil
        recorder.finish()
        #expect(recorder.error == first)
        #expect(recorder.summary == ["presence:1"])
    }

    @Test func invalidUTF8IsNotWellFormed() {
        var recorder = StreamRecorder()
        recorder.feed(
            Array("<presence id='1'/><presence><status>".utf8) + [0xC3, 0x28] + Array("</status></presence>".utf8))
        #expect(recorder.error?.condition == .notWellFormed)
        #expect(recorder.summary == ["presence:1"])
    }

    @Test func overlongUTF8AndSurrogatesAreNotWellFormed() {
        for bad: [UInt8] in [[0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xFF]] {
            var recorder = StreamRecorder()
            recorder.feed(Array("<presence a='".utf8) + bad + Array("'/>".utf8))
            #expect(recorder.error?.condition == .notWellFormed, "\(bad)")
        }
    }

    @Test func aDeclaredNonUTF8EncodingIsUnsupported() {
        let recorder = StreamRecorder.parse("<?xml version='1.0' encoding='ISO-8859-1'?><presence/>")
        #expect(recorder.error?.condition == .unsupportedEncoding)
    }

    @Test func aStreamInTheWrongNamespaceIsInvalidNamespace() {
        let recorder = StreamRecorder.parse(
            "<stream:stream xmlns:stream='urn:wrong' xmlns='jabber:client'><presence/></stream:stream>")
        #expect(recorder.error?.condition == .invalidNamespace)
        #expect(recorder.stanzas.isEmpty)
    }

    @Test func aStreamWithAnUnknownDefaultNamespaceIsInvalidNamespace() {
        for declaration in ["xmlns='urn:other'", ""] {
            let recorder = StreamRecorder.parse(
                "<stream:stream \(declaration) xmlns:stream='http://etherx.jabber.org/streams'><presence/>")
            #expect(recorder.error?.condition == .invalidNamespace, "\(declaration)")
        }
    }

    @Test func anUnboundPrefixIsBadNamespacePrefix() {
        let recorder = StreamRecorder.parse("<presence id='1'/><q:presence/>")
        #expect(recorder.error?.condition == .badNamespacePrefix)
        #expect(recorder.summary == ["presence:1"])
    }

    @Test func junkAfterTheClosedStreamIsNotWellFormed() {
        let recorder = StreamRecorder.parse(streamHeader + "<presence id='1'/></stream:stream><presence/>")
        #expect(recorder.closed == 1)
        #expect(recorder.error?.condition == .notWellFormed)
        #expect(recorder.summary == ["presence:1"])
    }

    @Test func inputEndingInsideAStanzaIsTruncatedAtTheStanzasStart() {
        let recorder = StreamRecorder.parse("<presence id='1'/>\n<presence id='2'><status>half")
        let error = try! #require(recorder.error)
        #expect(error.condition == .notWellFormed)
        #expect(error.message.contains("ended inside <presence>"))
        #expect(error.position == SourcePosition(line: 2, column: 1, byteOffset: 19))
        #expect(recorder.summary == ["presence:1"])
    }

    @Test func inputEndingInsideATagIsNotWellFormed() {
        for input in [
            streamHeader + "<presence id='1'/><presence id='2", "<presence id='1'/><pres", streamHeader + "<",
        ] {
            let recorder = StreamRecorder.parse(input)
            #expect(recorder.error?.condition == .notWellFormed, "\(input)")
        }
    }

    /// Found by FuzzStreamParser: the closing tag the parser adds when the input just stops was counted as
    /// input, so the error pointed past the last byte.
    @Test(arguments: [
        "<presence id='1'/>\n<![CDATA[half",
        "<presence id='1'/><![CDATA[half",
        streamHeader + "<presence id='1'/>\ntext<![CDATA[<b>hi</b>]]",
        "<presence id='1'/>\n<pres",
        streamHeader + "<presence id='1'/>\n  <presence id='2",
    ])
    func inputEndingInsideMarkupBetweenStanzasIsReportedAtTheEndOfTheInput(input: String) {
        let recorder = StreamRecorder.parse(input)
        let error = try! #require(recorder.error)
        #expect(error.condition == .notWellFormed)
        let lastLine = input.split(separator: "\n", omittingEmptySubsequences: false).last!
        #expect(
            error.position
                == SourcePosition(
                    line: input.filter { $0 == "\n" }.count + 1, column: lastLine.count + 1,
                    byteOffset: input.utf8.count))
        #expect(recorder.summary == ["presence:1"])
    }

    @Test func inputEndingInsideACDATASectionSaysSo() {
        let recorder = StreamRecorder.parse("<presence id='1'/><![CDATA[half")
        #expect(recorder.error?.message == "input ended inside a CDATA section")
    }

    @Test func inputEndingInsideTheFirstTagIsNotWellFormed() {
        for input in ["<presence id='1", "<stream:stream xmlns='jabber:client'", "garbage"] {
            let recorder = StreamRecorder.parse(input)
            #expect(recorder.error?.condition == .notWellFormed, "\(input)")
        }
    }
}
