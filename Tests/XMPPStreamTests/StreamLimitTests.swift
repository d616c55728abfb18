import Testing
import XMPPStream

@Suite("Every stream limit has a default and ends the stream with policy-violation")
struct StreamLimitTests {
    @Test func defaultsMatchWhatXMPPServersEnforce() {
        let limits = XMPPStreamLimits()
        #expect(limits.maxStanzaBytes == 262_144)
        #expect(limits.maxElementDepth == 32)
        #expect(limits.maxChildElements == 1024)
    }

    @Test func aStanzaOfExactlyTheLimitPassesAndOneByteMoreFails() {
        let prefix = "<presence id='x'><status>"
        let suffix = "</status></presence>"
        let limit = 1000
        let fitting = prefix + String(repeating: "a", count: limit - prefix.utf8.count - suffix.utf8.count) + suffix
        #expect(fitting.utf8.count == limit)
        let accepted = StreamRecorder.parse(fitting + fitting, limits: .init(maxStanzaBytes: limit))
        #expect(accepted.error == nil)
        #expect(accepted.stanzas.count == 2)

        let tooLarge =
            prefix + String(repeating: "a", count: limit + 1 - prefix.utf8.count - suffix.utf8.count) + suffix
        let rejected = StreamRecorder.parse(fitting + tooLarge, limits: .init(maxStanzaBytes: limit))
        #expect(rejected.error?.condition == .policyViolation)
        #expect(rejected.error?.limit == .stanzaBytes)
        #expect(rejected.error?.position.byteOffset == limit)
        #expect(rejected.stanzas.count == 1)
    }

    @Test func aHugeAttributeTripsTheLimitBeforeItHasArrivedInFull() {
        let limit = 64 * 1024
        var recorder = StreamRecorder(limits: .init(maxStanzaBytes: limit))
        recorder.feed("<presence id='ok'/><presence from='")
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 4096)
        var chunksFed = 0
        while recorder.error == nil && chunksFed < 10_000 {
            recorder.feed(chunk)
            chunksFed += 1
        }
        #expect(recorder.error?.condition == .policyViolation)
        #expect(recorder.error?.limit == .stanzaBytes)
        // Caught on the chunk that crossed the limit (16 bytes of the stanza came before the chunks), not after 40 MB.
        let stanzaPrefix = "<presence from='".utf8.count
        #expect(chunksFed == (limit - stanzaPrefix) / chunk.count + 1)
        #expect(recorder.summary == ["presence:ok"])
    }

    @Test func aHugeSingleChunkIsRefusedWithoutParsingPastTheLimit() {
        let limit = 4096
        var recorder = StreamRecorder(limits: .init(maxStanzaBytes: limit))
        let input =
            "<presence id='ok'/><presence from='" + String(repeating: "b", count: 1_000_000)
            + "'/><presence id='after'/>"
        recorder.feed(input)
        #expect(recorder.error?.limit == .stanzaBytes)
        #expect(recorder.error?.position.byteOffset == 19)
        #expect(recorder.summary == ["presence:ok"])
    }

    @Test func hugeTextBetweenStanzasTripsTheLimit() {
        var recorder = StreamRecorder(limits: .init(maxStanzaBytes: 100))
        recorder.feed("<presence id='1'/>" + String(repeating: " ", count: 150) + "<presence id='2'/>")
        #expect(recorder.error == nil, "whitespace is consumed as it arrives")
        recorder.feed("<presence id='3'>" + String(repeating: "x", count: 150))
        #expect(recorder.error?.limit == .stanzaBytes)
        #expect(recorder.summary == ["presence:1", "presence:2"])
    }

    @Test func elementDepthIsLimited() {
        func nested(_ depth: Int) -> String {
            String(repeating: "<a>", count: depth) + String(repeating: "</a>", count: depth)
        }
        let limits = XMPPStreamLimits(maxElementDepth: 4)
        #expect(StreamRecorder.parse(nested(4), limits: limits).error == nil)
        let deep = StreamRecorder.parse("<presence id='1'/>" + nested(5), limits: limits)
        #expect(deep.error?.condition == .policyViolation)
        #expect(deep.error?.limit == .elementDepth)
        #expect(deep.summary == ["presence:1"])
    }

    @Test func childElementsPerStanzaAreLimited() {
        func withChildren(_ count: Int) -> String {
            "<presence>" + String(repeating: "<c/>", count: count) + "</presence>"
        }
        let limits = XMPPStreamLimits(maxChildElements: 10)
        #expect(StreamRecorder.parse(withChildren(10), limits: limits).error == nil)
        let many = StreamRecorder.parse(withChildren(11), limits: limits)
        #expect(many.error?.condition == .policyViolation)
        #expect(many.error?.limit == .childElements)
        // Nested descendants count too.
        let nested = StreamRecorder.parse(
            "<presence><a><b><c><d><e><f><g><h><i><j><k/></j></i></h></g></f></e></d></c></b></a></presence>",
            limits: limits)
        #expect(nested.error?.limit == .childElements)
    }

    @Test func aLongPrologueWithoutAnyElementIsRefused() {
        var recorder = StreamRecorder(limits: .init(maxStanzaBytes: 100))
        recorder.feed("<?xml version='1.0'" + String(repeating: " ", count: 200))
        #expect(recorder.error?.condition == .policyViolation)
    }
}
