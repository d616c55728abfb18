import Foundation
import Testing
import XMPPStream

@Suite("Stanzas are delivered as soon as their last byte arrives")
struct IncrementalDeliveryTests {
    let document =
        streamHeader + """
            <presence id='1' from='alice@example.com/desk'><show>away</show><status>Lunch</status></presence>
            <message id='2' to='bob@example.com'><body>Hi &amp; bye</body></message>
            <presence id='3'/>
            <iq id='4' type='get'><query xmlns='jabber:iq:roster'/></iq>
            </stream:stream>
            """

    @Test func aStanzaFedAloneOnAnOpenStreamIsDeliveredWithoutMoreBytes() {
        var recorder = StreamRecorder()
        recorder.feed(streamHeader)
        #expect(recorder.headers.count == 1)
        recorder.feed("<presence id='only'/>")
        #expect(recorder.summary == ["presence:only"])
        recorder.feed("<presence id='next'><show>dnd</show></presence>")
        #expect(recorder.summary == ["presence:only", "presence:next"])
        #expect(recorder.error == nil)
    }

    @Test func aBareStanzaIsDeliveredWhenItsEndTagIsTheLastByteFed() {
        var recorder = StreamRecorder()
        recorder.feed("<presence id='a'><status>x</status></presence>")
        #expect(recorder.summary == ["presence:a"])
        #expect(recorder.headers.first?.isImplicit == true)
    }

    @Test func splittingTheInputAtAnyByteOffsetDeliversTheSameStanzas() {
        let bytes = Array(document.utf8)
        let expected = StreamRecorder.parse(document).summary
        #expect(expected == ["presence:1", "message:2", "presence:3", "iq:4"])
        for split in 0 ... bytes.count {
            var recorder = StreamRecorder()
            recorder.feed(Array(bytes[..<split]))
            recorder.feed(Array(bytes[split...]))
            recorder.finish()
            #expect(recorder.error == nil, "split at \(split)")
            #expect(recorder.summary == expected, "split at \(split)")
            #expect(recorder.closed == 1)
        }
    }

    @Test func oneByteChunksDeliverEachStanzaAtItsLastByte() {
        let bytes = Array(document.utf8)
        var recorder = StreamRecorder()
        var deliveredAt: [Int] = []
        for (offset, byte) in bytes.enumerated() {
            let before = recorder.stanzas.count
            recorder.feed([byte])
            if recorder.stanzas.count > before { deliveredAt.append(offset) }
        }
        recorder.finish()
        #expect(recorder.error == nil)
        #expect(recorder.summary == ["presence:1", "message:2", "presence:3", "iq:4"])
        // Each delivery happened on the '>' that closes the stanza.
        for (offset, stanza) in zip(deliveredAt, recorder.stanzas) {
            #expect(bytes[offset] == UInt8(ascii: ">"))
            #expect(stanza.position.byteOffset + stanza.byteCount == offset + 1)
        }
    }

    @Test func aStanzaKeptByTheReceiverIsNotChangedByLaterStanzas() {
        let recorder = StreamRecorder.parse(
            "<presence id='1'><status>first</status></presence><presence id='2'><status>second</status></presence>")
        let first = recorder.stanzas[0]
        let status = first.firstChild(of: first.root, named: "status", in: "jabber:client")
        #expect(status.map { first.text(of: $0) } == "first")
    }

    @Test func stanzaPositionsAndSizesPointIntoTheInput() {
        let input = "<presence id='1'/>\n  <presence id='2'>\n<show>xa</show></presence>"
        let recorder = StreamRecorder.parse(input)
        #expect(
            recorder.stanzas.map(\.position) == [
                SourcePosition(line: 1, column: 1, byteOffset: 0),
                SourcePosition(line: 2, column: 3, byteOffset: 21),
            ])
        #expect(recorder.stanzas.map(\.byteCount) == [18, input.utf8.count - 21])
    }

    @Test func streamHeaderAttributesAreReported() {
        let recorder = StreamRecorder.parse(streamHeader + "</stream:stream>")
        let header = recorder.headers.first
        #expect(header?.contentNamespace == "jabber:client")
        #expect(header?.to == "example.com")
        #expect(header?.version == "1.0")
        #expect(header?.language == "en")
        #expect(header?.isImplicit == false)
        #expect(recorder.closed == 1)
    }

    @Test func emptyOrBlankInputIsAnEmptyStreamNotAnError() {
        for input in ["", "  \n", "\u{FEFF}\n"] {
            let recorder = StreamRecorder.parse(input)
            #expect(recorder.error == nil)
            #expect(recorder.stanzas.isEmpty)
        }
    }

    @Test func deferralIsDetectedAtRunTime() throws {
        // Whatever the installed libexpat, the parser must know whether reparse deferral exists (the delivery
        // tests above prove it is off when it does). Checked independently of `dlsym`: the symbol's name is in
        // the dynamic symbol table of the libexpat this process loaded, and every libexpat from 2.6.0 has it.
        #expect(Expat.version.hasPrefix("expat_"))
        // /proc files report a size of 0: read them to their end rather than by their size.
        let maps = String(
            decoding: try #require(FileHandle(forReadingAtPath: "/proc/self/maps")).readDataToEndOfFile(), as: UTF8.self
        )
        let library = try #require(
            maps.split(separator: "\n").compactMap { line -> String? in
                guard let slash = line.firstIndex(of: "/"), line.contains("libexpat") else { return nil }
                return String(line[slash...])
            }.first, "libexpat is mapped into the process")
        let bytes = try #require(FileManager.default.contents(atPath: library))
        let hasSymbol = bytes.range(of: Data("XML_SetReparseDeferralEnabled".utf8)) != nil
        #expect(Expat.hasReparseDeferral == hasSymbol, "\(library)")
        let parts = Expat.version.dropFirst("expat_".count).split(separator: ".").compactMap { Int($0) }
        if parts.count >= 2, (parts[0], parts[1]) >= (2, 6) { #expect(Expat.hasReparseDeferral) }
    }

    @Test func stanzasGivenBackAreReusedWithoutChangingAnyStanzaAReceiverStillHolds() throws {
        let parser = XMPPStreamParser()
        var kept: [Stanza] = []
        func feed(_ from: Int, _ to: Int) throws {
            var text = from == 0 ? streamHeader : ""
            for index in from ..< to {
                text +=
                    "<presence id='\(index)'><status>\(String(repeating: "s", count: index % 40))</status></presence>"
            }
            try parser.feed(Array(text.utf8)) { event in
                if case .stanza(let stanza) = event { kept.append(stanza) }
            }
        }
        try feed(0, 300)
        // Give back every other stanza, keeping copies of some of them: a stanza built in returned memory must
        // never show through a copy someone still holds.
        let copies = Array(kept[0 ..< 100])
        for index in stride(from: 0, to: 300, by: 2) { parser.recycle(kept[index]) }
        try feed(300, 700)
        for (index, stanza) in kept.enumerated() {
            #expect(stanza.attribute("id", of: stanza.root) == "\(index)")
            let status = try #require(stanza.firstChild(of: stanza.root, named: "status", in: "jabber:client"))
            #expect(stanza.text(of: status) == String(repeating: "s", count: index % 40))
        }
        for (index, stanza) in copies.enumerated() { #expect(stanza.attribute("id", of: stanza.root) == "\(index)") }
    }
}
