import PresenceStore
import PresenceTestSupport
import Testing

@Suite("Pinned users in the LRU: on screen, never evicted")
struct PinningTests {
    private func online(_ user: String) -> UserPresence {
        UserPresence(applying: available("\(user)@example.com/desk"), receivedAt: time(1))
    }

    private func store(_ users: [String], in storage: LRUMemoryStorage) {
        for user in users { storage.set(online(user), for: jid("\(user)@example.com")) }
    }

    @Test func aPinnedUserOutlivesTheCountLimitAndTheStatisticsSaySo() {
        let storage = LRUMemoryStorage(countLimit: 2)
        storage.pin([jid("alice@example.com")])
        store(["alice", "bob", "carol", "dave"], in: storage)
        #expect(storage.lookup(jid("alice@example.com")).presence != nil, "pinned before it was stored")
        #expect(storage.count == 2, "pinned users take their place first; the others share the rest")
        #expect(storage.statistics.pinned == 1)
        #expect(storage.lookup(jid("dave@example.com")).presence != nil)
        #expect(storage.lookup(jid("bob@example.com")) == .lost(.countLimit))
        #expect(storage.lookup(jid("carol@example.com")) == .lost(.countLimit))
    }

    @Test func pressureAndTheCostLimitSparePinnedUsers() {
        let storage = LRUMemoryStorage(costLimit: 1)
        store(["alice"], in: storage)
        #expect(storage.count == 0, "a cost limit of one byte holds nobody")
        storage.pin([jid("bob@example.com")])
        store(["bob", "carol"], in: storage)
        #expect(storage.count == 1)
        let response = storage.handle(.critical)
        #expect(response.entriesAfter == 1, "a critical level clears everyone but the pinned")
        #expect(storage.lookup(jid("bob@example.com")).presence != nil)
    }

    @Test func pinnedUsersBeyondTheLimitAreHeldAndShownAndTwoPinsNeedTwoReleases() {
        let storage = LRUMemoryStorage(countLimit: 1)
        storage.pin([jid("alice@example.com"), jid("bob@example.com")])
        storage.pin([jid("alice@example.com")])
        store(["alice", "bob", "carol"], in: storage)
        #expect(storage.count == 2, "more than the limit: both are on screen")
        #expect(storage.statistics.pinned == 2)
        #expect(storage.lookup(jid("carol@example.com")) == .lost(.countLimit))
        storage.unpin([jid("alice@example.com"), jid("bob@example.com")])
        #expect(storage.count == 1, "bob is let go and evicted at once: the limit holds again")
        #expect(storage.lookup(jid("bob@example.com")) == .lost(.countLimit))
        storage.unpin([jid("alice@example.com")])
        #expect(storage.statistics.pinned == 0)
        #expect(storage.count == 1)
        #expect(storage.lookup(jid("alice@example.com")).presence != nil)
    }

    @Test func theCallersRemovalsStillTakePinnedUsers() {
        let storage = LRUMemoryStorage(countLimit: 5)
        storage.pin([jid("alice@example.com"), jid("bob@example.com")])
        store(["alice", "bob", "carol"], in: storage)
        storage.remove(jid("alice@example.com"))
        #expect(storage.lookup(jid("alice@example.com")) == .unknown)
        storage.removeAll()
        #expect(storage.count == 0)
        #expect(storage.statistics.pinned == 0)
        store(["bob"], in: storage)
        #expect(storage.statistics.pinned == 1, "the pin outlives the value")
    }
}
