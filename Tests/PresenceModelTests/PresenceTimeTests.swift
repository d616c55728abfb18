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
