import PresenceIngest
import PresenceStore
import PresenceWorkload
import Testing
import XMPPStream

@Suite("A presence feed parses, decodes, counts and hands out updates")
struct PresenceFeedTests {
    @Test func updatesAreCountedByOutcomeAndAppliedInOrder() throws {
        var feed = PresenceFeed()
        var applied: [PresenceUpdate] = []
        try feed.feed(
            Array(
                """
                <presence from='alice@example.com/desk'/>
                <presence from='alice@example.com/desk' type='subscribe'/>
                <presence/>
                <message from='a@b/c'/>
                <presence from='bad@@example.com'/>
                <presence from='bob@example.com/phone' type='unavailable'/>
                """.utf8)
        ) { applied.append($0) }
        try feed.finish { applied.append($0) }
        #expect(applied.map(\.from.description) == ["alice@example.com/desk", "bob@example.com/phone"])
        #expect(feed.statistics.stanzas == 6)
        #expect(feed.statistics.presenceUpdates == 2)
        #expect(feed.statistics.ignored == [.subscribe: 1, .message: 1])
        #expect(feed.statistics.rejected == [.missingFrom: 1, .invalidFrom(.forbiddenCharacterInDomainpart): 1])
    }

    @Test func updatesBeforeAStreamErrorStayAppliedAndCounted() {
        var feed = PresenceFeed()
        var applied = 0
        #expect(throws: XMPPStreamError.self) {
            try feed.feed(
                Array("<presence from='a@b/c'/><presence from='d@e/f'/><presence from='x@y/z'><!-- --></presence>".utf8)
            ) { _ in applied += 1 }
        }
        #expect(applied == 2)
        #expect(feed.statistics.presenceUpdates == 2)
        #expect(feed.error?.condition == .restrictedXML)
    }

    @Test func aGeneratedStreamAggregatesIntoOneStatusPerUser() throws {
        var generator = PresenceStreamGenerator(.init(users: 200, updates: 5000, seed: 42))
        let bytes = generator.generate()
        var feed = PresenceFeed()
        var users: [BareJID: UserPresence] = [:]
        let now = PresenceTime(secondsSinceEpoch: 1_800_000_000)
        let apply: (PresenceUpdate) -> Void = {
            users[$0.from.bare, default: UserPresence()].apply($0, receivedAt: now)
        }
        try feed.feed(bytes, apply: apply)
        try feed.finish(apply: apply)
        #expect(feed.statistics.presenceUpdates == 5000)
        #expect(feed.statistics.rejected.isEmpty)
        #expect(feed.statistics.ignoredTotal > 0)
        #expect(users.count > 100 && users.count <= 200)
        #expect(users.values.allSatisfy { $0.status != nil })
        #expect(users.values.contains { $0.status?.isAvailable == false })
    }
}

@Suite("Generated streams are deterministic and realistic")
struct GeneratorTests {
    @Test func theSameSeedGivesTheSameBytesAndAnotherSeedDoesNot() {
        var first = PresenceStreamGenerator(.init(users: 50, updates: 500, seed: 7))
        var second = PresenceStreamGenerator(.init(users: 50, updates: 500, seed: 7))
        var other = PresenceStreamGenerator(.init(users: 50, updates: 500, seed: 8))
        let bytes = first.generate()
        #expect(bytes == second.generate())
        #expect(bytes != other.generate())
    }

    @Test func activityIsSkewedTowardsAFewPeople() throws {
        var generator = PresenceStreamGenerator(.init(users: 1000, updates: 20_000, seed: 3))
        var feed = PresenceFeed()
        var perUser: [BareJID: Int] = [:]
        try feed.feed(generator.generate()) { perUser[$0.from.bare, default: 0] += 1 }
        let counts = perUser.values.sorted(by: >)
        let topTenPercent = counts.prefix(100).reduce(0, +)
        #expect(Double(topTenPercent) / 20_000 > 0.3)
    }
}
