import Foundation
import PresenceModel
import Testing

@Suite("XEP-0082 timestamps")
struct PresenceTimeTests {
    @Test func utcTimestampsRoundTrip() throws {
        let time = try #require(PresenceTime(xmppTimestamp: "2026-11-22T09:15:00Z"))
        #expect(time.millisecondsSinceEpoch == 1_795_338_900_000)
        #expect(time.description == "2026-11-22T09:15:00Z")
        let precise = try #require(PresenceTime(xmppTimestamp: "2026-11-22T09:15:00.25Z"))
        #expect(precise.description == "2026-11-22T09:15:00.250Z")
    }

    @Test func formattingMatchesFoundationsISO8601ForTwentyThousandTimes() {
        let whole = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0 ..< 20_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            // 1970 to about 2200, and sometimes a whole second.
            var milliseconds = Int64(state >> 31) % 7_258_118_400_000
            if state & 3 == 0 { milliseconds -= milliseconds % 1000 }
            let time = PresenceTime(millisecondsSinceEpoch: milliseconds)
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            let expected = milliseconds % 1000 == 0 ? whole.string(from: date) : fractional.string(from: date)
            #expect(time.description == expected)
            #expect(time.withUTF8Description { String(decoding: $0, as: UTF8.self) } == expected, "the bytes in place")
            #expect(PresenceTime(xmppTimestamp: time.description) == time, "round trip")
        }
        #expect(PresenceTime(millisecondsSinceEpoch: -1).description == "1969-12-31T23:59:59.999Z")
        let year10000 = PresenceTime(millisecondsSinceEpoch: 253_402_300_800_000)
        #expect(year10000.description == "10000-01-01T00:00:00Z")
        #expect(year10000.withUTF8Description { String(decoding: $0, as: UTF8.self) } == "10000-01-01T00:00:00Z")
    }

    @Test func offsetsAreAppliedAndLegacyStampsAreUTC() {
        #expect(
            PresenceTime(xmppTimestamp: "2026-11-22T10:15:00+01:00")
                == PresenceTime(xmppTimestamp: "2026-11-22T09:15:00Z"))
        #expect(
            PresenceTime(xmppTimestamp: "2026-11-22T04:15:00-05:00")
                == PresenceTime(xmppTimestamp: "2026-11-22T09:15:00Z"))
        #expect(PresenceTime(xmppTimestamp: "20261122T09:15:00") == PresenceTime(xmppTimestamp: "2026-11-22T09:15:00Z"))
    }

    @Test func datesBeforeTheEpochAndLeapDaysAreExact() {
        #expect(PresenceTime(xmppTimestamp: "1969-12-31T23:59:59Z")?.millisecondsSinceEpoch == -1000)
        #expect(PresenceTime(xmppTimestamp: "2024-02-29T00:00:00Z")?.description == "2024-02-29T00:00:00Z")
    }

    @Test(arguments: [
        "", "yesterday", "2026-13-01T00:00:00Z", "2026-11-22 09:15:00Z", "2026-11-22T09:15:00",
        "2026-11-22T09:15:00Zjunk", "2026-11-22T25:00:00Z",
    ])
    func malformedTimestampsAreRefused(text: String) {
        #expect(PresenceTime(xmppTimestamp: text) == nil)
    }
}
