import Foundation
import PresenceIngest
import PresenceTestSupport
import Testing

@testable import PresenceStore

@Suite("Pressure and limits: the dictionary never loses, the caches do, and say so")
struct StoragePressureTests {
    /// 100 users, then pressure at the given level.
    func loaded(_ storage: any MemoryStorage) -> [BareJID: UserPresence] {
        var truth: [BareJID: UserPresence] = [:]
        for index in 0 ..< 100 {
            let update = available("user\(index)@example.com/desk", priority: 1, status: "Working")
            storage.apply(update, receivedAt: time(Int64(index)))
            truth[update.from.bare, default: UserPresence()].apply(update, receivedAt: time(Int64(index)))
        }
        return truth
    }

    @Test(arguments: [MemoryPressure.warning, .critical])
    func theDictionaryDropsNothingUnderPressureAndReportsItsBudget(level: MemoryPressure) {
        let storage = DictionaryMemoryStorage(memoryBudget: 1000)
        let truth = loaded(storage)
        let response = storage.handle(level)
        #expect(response.evicted == 0)
        #expect(response.entriesAfter == 100)
        #expect(response.overBudget)
        let audit = PresenceAudit.audit(storage, truth: truth)
        #expect(audit.lost.isEmpty)
        #expect(audit.retained == 100)
        #expect(!DictionaryMemoryStorage(memoryBudget: 1 << 30).handle(level).overBudget)
    }

    @Test(arguments: [MemoryPressure.warning, .critical])
    func nscacheEmptiesOnAnyWarningAsAppsDo(level: MemoryPressure) {
        let storage = NSCacheMemoryStorage()
        let truth = loaded(storage)
        let response = storage.handle(level)
        #expect(response.evicted == 100)
        let audit = PresenceAudit.audit(storage, truth: truth)
        #expect(audit.lost.count == 100)
        #expect(audit.lostByCause == [.pressure: 100])
        #expect(storage.lookup(jid("user7@example.com")) == .lost(.pressure))
    }

    @Test func lruTrimsToAFractionOnWarningAndClearsOnCritical() {
        let storage = LRUMemoryStorage(warningRetainFraction: 0.3)
        let truth = loaded(storage)
        _ = storage.get(jid("user0@example.com"))  // recently used: survives the warning
        let warning = storage.handle(.warning)
        #expect(warning.evicted == 70)
        #expect(storage.count == 30)
        #expect(storage.get(jid("user0@example.com")) != nil)
        #expect(storage.lookup(jid("user1@example.com")) == .lost(.pressure))
        #expect(storage.handle(.critical).evicted == 30)
        #expect(PresenceAudit.audit(storage, truth: truth).lost.count == 100)
    }

    @Test func theAuditsLostListIsExactlyTheKeysMissingFromTheStorage() {
        for storage in [NSCacheMemoryStorage(countLimit: 37), LRUMemoryStorage(countLimit: 37)] as [any MemoryStorage] {
            let truth = loaded(storage)
            let audit = PresenceAudit.audit(storage, truth: truth)
            let missing = Set(truth.keys).subtracting(storage.keys)
            #expect(Set(audit.lost) == missing, "\(storage.name)")
            #expect(audit.lost.count == 63)
            #expect(audit.retained + audit.lost.count + audit.stale.count == 100)
            #expect(audit.lossRate == 0.63)
            #expect(audit.evictions[.countLimit] == 63)
        }
    }

    @Test func nscacheEvictsTheNewestEntryAtEqualCost() {
        // corelibs NSCache keeps a cost-sorted list and, at equal cost, evicts the entry just added.
        let storage = NSCacheMemoryStorage(countLimit: 3)
        for name in ["a", "b", "c", "d"] {
            storage.set(user(available("\(name)@example.com/desk")), for: jid("\(name)@example.com"))
        }
        #expect(Set(storage.keys) == [jid("a@example.com"), jid("b@example.com"), jid("c@example.com")])
        #expect(storage.lookup(jid("d@example.com")) == .lost(.countLimit))
    }

    @Test func lruEvictsTheLeastRecentlyUsedExactly() {
        let storage = LRUMemoryStorage(countLimit: 3)
        for name in ["a", "b", "c"] {
            storage.set(user(available("\(name)@example.com/desk")), for: jid("\(name)@example.com"))
        }
        _ = storage.get(jid("a@example.com"))
        storage.set(user(available("d@example.com/desk")), for: jid("d@example.com"))
        #expect(Set(storage.keys) == [jid("a@example.com"), jid("c@example.com"), jid("d@example.com")])
        #expect(storage.lookup(jid("b@example.com")) == .lost(.countLimit))
        // Stored again: no longer lost.
        storage.set(user(available("b@example.com/desk")), for: jid("b@example.com"))
        #expect(storage.get(jid("b@example.com")) != nil)
        #expect(storage.count == 3)
    }

    @Test func lruCostLimitIsExact() {
        let one = user(available("x@example.com/desk", status: "Working"))
        let cost = EntryCost.estimate(jid("user10@example.com"), one)
        let storage = LRUMemoryStorage(costLimit: cost * 10)
        for index in 10 ..< 40 { storage.set(one, for: jid("user\(index)@example.com")) }  // equal key lengths, equal costs
        let statistics = storage.statistics
        #expect(statistics.entries == 10)
        #expect(statistics.estimatedBytes <= cost * 10)
        #expect(statistics.evictions[.costLimit] == 20)
    }

    @Test func lruEntriesExpireAfterTheirTimeToLive() {
        let clock = ManualClock()
        let storage = LRUMemoryStorage(timeToLive: .seconds(60), now: { clock.milliseconds })
        storage.set(user(available("a@example.com/desk")), for: jid("a@example.com"))
        clock.advance(by: 30_000)
        storage.set(user(available("b@example.com/desk")), for: jid("b@example.com"))
        clock.advance(by: 31_000)
        #expect(storage.lookup(jid("a@example.com")) == .lost(.expired))
        #expect(storage.get(jid("b@example.com")) != nil)
        clock.advance(by: 60_000)
        #expect(storage.count == 0)
        #expect(storage.statistics.evictions[.expired] == 2)
    }

    @Test func anUpdateAfterAnEvictionRebuildsAStaleUser() throws {
        let storage = LRUMemoryStorage(countLimit: 1)
        let replay = PresenceReplay(storage: storage, clock: { time(0) })
        let stream = """
            <presence from='alice@example.com/desk'><priority>10</priority></presence>
            <presence from='alice@example.com/phone'><priority>0</priority></presence>
            <presence from='bob@example.com/desk'/>
            <presence from='alice@example.com/phone'><show>away</show></presence>
            """
        Array(stream.utf8).withUnsafeBytes { try! replay.feed($0) }
        try! replay.finish()
        let audit = try #require(replay.audit())
        #expect(
            audit.stale == [jid("alice@example.com")],
            "alice was rebuilt from her phone alone; the truth shows the desk")
        #expect(audit.lost == [jid("bob@example.com")])
    }

    @Test func aReplayKeepsATruthOnlyWhereAnAuditNeedsOne() throws {
        let stream = Array(
            """
            <presence from='alice@example.com/desk'/><presence from='bob@example.com/desk'/>
            <presence from='carol@example.com/desk'/><presence from='alice@example.com/desk' type='unavailable'/>
            """.utf8)
        let withoutTruth = PresenceReplay(storage: DictionaryMemoryStorage(), truth: .none, clock: { time(0) })
        stream.withUnsafeBytes { try! withoutTruth.feed($0) }
        try withoutTruth.finish()  // applies on a second thread: finishing waits for it
        #expect(withoutTruth.audit() == nil && withoutTruth.measureRefill() == nil)
        #expect(withoutTruth.storage.count == 3, "the storage is filled all the same")

        let dictionary = PresenceReplay(
            storage: DictionaryMemoryStorage(), truth: .forAudit(of: .dictionary), clock: { time(0) })
        stream.withUnsafeBytes { try! dictionary.feed($0) }
        let ownAudit = try #require(dictionary.audit())
        #expect(ownAudit.users == 3 && ownAudit.retained == 3 && ownAudit.lost.isEmpty)
        #expect(dictionary.truth === dictionary.storage, "a storage that never evicts is its own truth")

        let lru = PresenceReplay(
            storage: LRUMemoryStorage(countLimit: 1), truth: .forAudit(of: .lru), clock: { time(0) })
        stream.withUnsafeBytes { try! lru.feed($0) }
        let audit = try #require(lru.audit())
        #expect(audit.users == 3 && audit.lost.count == 2, "the separate truth holds everyone the LRU dropped")
        #expect(try #require(lru.measureRefill()).probes == 2)
    }
}
