import Foundation
import Testing
@testable import PresenceStore

@Suite("Every storage keeps the MemoryStorage contract")
struct StorageContractTests {
    @Test(arguments: StorageKind.allCases)
    func setGetRemoveAndCount(kind: StorageKind) {
        let storage = kind.make()
        let alice = jid("alice@example.com")
        let bob = jid("bob@example.com")
        #expect(storage.lookup(alice) == .unknown)
        let value = user(available("alice@example.com/desk", priority: 5, status: "In the office"))
        storage.set(value, for: alice)
        storage.set(user(available("bob@example.com/phone")), for: bob)
        #expect(storage.get(alice) == value)
        #expect(storage.count == 2)
        #expect(Set(storage.keys) == [alice, bob])
        #expect(storage.remove(alice) == value)
        #expect(storage.lookup(alice) == .unknown, "a caller's removal is not a loss")
        #expect(storage.count == 1)
        storage.removeAll()
        #expect(storage.count == 0)
        #expect(storage.lookup(bob) == .unknown)
        #expect(storage.statistics.removals[.explicit] == 2)
    }

    @Test(arguments: StorageKind.allCases)
    func updateSeesNilForAbsentUsersAndNilRemoves(kind: StorageKind) {
        let storage = kind.make()
        let alice = jid("alice@example.com")
        let sawNil = storage.update(alice) { value -> Bool in
            defer { value = user(available("alice@example.com/desk")) }
            return value == nil
        }
        #expect(sawNil)
        #expect(storage.get(alice)?.status?.isAvailable == true)
        storage.update(alice) { $0 = nil }
        #expect(storage.lookup(alice) == .unknown)
    }

    @Test(arguments: StorageKind.allCases)
    func valuesRoundTripExactly(kind: StorageKind) {
        let storage = kind.make()
        var value = UserPresence()
        value.apply(available("Ünïcode@example.com/Desk ✓", priority: -128, show: .xa, status: String(repeating: "é", count: 300)), receivedAt: time(1))
        value.apply(PresenceUpdate(from: try! JID("ünïcode@example.com/phone"), availability: .available,
                                   details: PresenceDetails(show: .chat, status: nil, priority: 127, attendance: .businessTrip),
                                   delayedAt: PresenceTime(millisecondsSinceEpoch: -5)), receivedAt: time(2))
        value.apply(PresenceUpdate(from: try! JID("ünïcode@example.com/tablet"), availability: .unavailable,
                                   details: PresenceDetails(status: "", attendance: .sickLeave)), receivedAt: time(3))
        let key = jid("ünïcode@example.com")
        storage.set(value, for: key)
        #expect(storage.get(key) == value)
    }

    @Test(arguments: StorageKind.allCases)
    func applyAggregatesLikeUserPresence(kind: StorageKind) {
        let storage = kind.make()
        storage.apply(available("alice@example.com/desk", priority: 10), receivedAt: time(1))
        storage.apply(available("alice@example.com/phone", priority: 0, show: .away), receivedAt: time(2))
        storage.apply(unavailable("alice@example.com/desk"), receivedAt: time(3))
        #expect(storage.get(jid("alice@example.com"))?.status?.presence.resource == "phone")
    }

    @Test(arguments: StorageKind.allCases)
    func concurrentUpdatesOfTheSameAndDifferentUsersLoseNothing(kind: StorageKind) async {
        let storage = kind.make()
        let tasks = 8
        let steps = 300
        let shared = (0 ..< 5).map { "shared\($0)@example.com" }
        await withTaskGroup(of: Void.self) { group in
            for task in 0 ..< tasks {
                group.addTask {
                    for step in 0 ..< steps {
                        // Each task keeps exactly one resource online per user: it adds t<task>-<step> and removes
                        // t<task>-<step-1>. A lost update leaves a stale resource behind or misses the new one.
                        for account in shared + ["own\(task)@example.com"] {
                            storage.apply(available("\(account)/t\(task)-\(step)", priority: Int8(task)), receivedAt: time(Int64(step)))
                            if step > 0 { storage.apply(unavailable("\(account)/t\(task)-\(step - 1)"), receivedAt: time(Int64(step))) }
                        }
                    }
                }
            }
        }
        for account in shared {
            let resources = Set(storage.get(jid(account))?.availableResources.map(\.resource) ?? [])
            #expect(resources == Set((0 ..< tasks).map { "t\($0)-\(steps - 1)" }), "\(account)")
            #expect(storage.get(jid(account))?.status?.presence.details.priority == Int8(tasks - 1))
        }
        for task in 0 ..< tasks {
            #expect(storage.get(jid("own\(task)@example.com"))?.availableResources.map(\.resource) == ["t\(task)-\(steps - 1)"])
        }
        #expect(storage.count == shared.count + tasks)
    }

    @Test(arguments: StorageKind.allCases)
    func theRemovalObserverMayCallBackIntoTheStorage(kind: StorageKind) {
        let storage = kind.make(countLimit: 2)
        let log = RemovalLog()
        storage.setRemovalObserver { event in
            _ = storage.lookup(event.key)  // would deadlock if called under the storage's lock
            log.append(event)
        }
        for index in 0 ..< 4 { storage.set(user(available("u\(index)@example.com/desk")), for: jid("u\(index)@example.com")) }
        storage.set(user(available("u3@example.com/phone")), for: jid("u3@example.com"))
        storage.remove(jid("u3@example.com"))
        let causes = log.all.map(\.cause)
        #expect(causes.contains(.explicit) || kind == .nscache || causes.contains(.explicit))
        if kind != .dictionary { #expect(causes.contains(.countLimit)) }
    }
}

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
        for name in ["a", "b", "c", "d"] { storage.set(user(available("\(name)@example.com/desk")), for: jid("\(name)@example.com")) }
        #expect(Set(storage.keys) == [jid("a@example.com"), jid("b@example.com"), jid("c@example.com")])
        #expect(storage.lookup(jid("d@example.com")) == .lost(.countLimit))
    }

    @Test func lruEvictsTheLeastRecentlyUsedExactly() {
        let storage = LRUMemoryStorage(countLimit: 3)
        for name in ["a", "b", "c"] { storage.set(user(available("\(name)@example.com/desk")), for: jid("\(name)@example.com")) }
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

    @Test func anUpdateAfterAnEvictionRebuildsAStaleUser() {
        let storage = LRUMemoryStorage(countLimit: 1)
        var replay = PresenceReplay(storage: storage, clock: { time(0) })
        let stream = """
            <presence from='alice@example.com/desk'><priority>10</priority></presence>
            <presence from='alice@example.com/phone'><priority>0</priority></presence>
            <presence from='bob@example.com/desk'/>
            <presence from='alice@example.com/phone'><show>away</show></presence>
            """
        Array(stream.utf8).withUnsafeBytes { try! replay.feed($0) }
        try! replay.finish()
        let audit = replay.audit()
        #expect(audit.stale == [jid("alice@example.com")], "alice was rebuilt from her phone alone; the truth shows the desk")
        #expect(audit.lost == [jid("bob@example.com")])
    }
}

/// A clock tests move by hand.
final class ManualClock: @unchecked Sendable {
    // @unchecked: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value: Int64 = 1_000_000

    var milliseconds: Int64 { lock.withLock { value } }
    func advance(by milliseconds: Int64) { lock.withLock { value += milliseconds } }
}
