import Foundation
import PresenceDisk
import PresenceModel
import PresenceStore
import PresenceTestSupport
import Testing

/// A data directory of the test's own, removed afterwards.
func withDataDirectory<R>(_ body: (String) throws -> R) rethrows -> R {
    let directory = NSTemporaryDirectory() + "presence-disk-test-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: directory) }
    return try body(directory)
}

func withDataDirectory<R>(_ body: (String) async throws -> R) async rethrows -> R {
    let directory = NSTemporaryDirectory() + "presence-disk-test-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: directory) }
    return try await body(directory)
}

/// A tier that flushes only when told (an hour's interval), so tests decide what is on disk.
func tier(
    in directory: String, memory: (any MemoryStorage)? = DictionaryMemoryStorage(), reset: Bool = false
) throws -> TieredStorage {
    try TieredStorage(
        memory: memory, disk: SQLitePresenceStore(directory: directory, reset: reset),
        configuration: .init(flushInterval: .seconds(3600)))
}

@Suite("Every disk-tier kind keeps the MemoryStorage contract")
struct DiskTierContractTests {
    @Test(arguments: MemoryStorageKind.diskKinds())
    func keepsTheMemoryStorageContract(kind: MemoryStorageKind) async throws {
        try await checkMemoryStorageContract(kind)
    }

    @Test func kindsAreNamedByTheirTiersAndFoundByName() throws {
        #expect(MemoryStorageKind.diskKinds().map(\.name) == ["dictionary+disk", "nscache+disk", "lru+disk", "disk"])
        #expect(MemoryStorageKind.named("lru+disk")?.name == "lru+disk")
        #expect(MemoryStorageKind.named("lru")?.name == "lru")
        #expect(MemoryStorageKind.named("lru+ssd") == nil)
        #expect(try MemoryStorageKind.named("disk")?.make().name == "disk")
    }
}

@Suite("The disk tier keeps what memory drops")
struct DiskTierEvictionTests {
    @Test func anEvictedDirtyUserIsNeverLostBeforeItIsOnDisk() throws {
        try withDataDirectory { directory in
            let storage = try tier(in: directory, memory: LRUMemoryStorage(countLimit: 10))
            defer { storage.close() }
            for index in 0 ..< 100 { storage.apply(available("u\(index)@example.com/desk"), receivedAt: time(1)) }
            #expect(storage.count == 100)
            #expect(storage.tierStatistics.spilled[.countLimit] == 90, "memory holds 10, the buffer the others")
            #expect(storage.tierStatistics.dirty == 100)
            for index in 0 ..< 100 {
                #expect(storage.get(jid("u\(index)@example.com"))?.status?.isAvailable == true, "u\(index)")
            }
            #expect(storage.statistics.lost == 0)
            #expect(storage.flush())
            #expect(storage.tierStatistics.dirty == 0)
            #expect(storage.tierStatistics.diskUsers == 100)
            let (stored, tier) = storage.tieredLookup(jid("u0@example.com"))
            #expect(stored.presence?.status?.isAvailable == true)
            #expect(tier == .disk, "u0 was evicted long ago: the disk answers")
            #expect(storage.tierStatistics.diskHits >= 1)
        }
    }

    @Test func onlyATierWhoseMemoryKeepsEveryoneAppliesWithoutReadingTheDisk() throws {
        // An event loop applies a live feeder's updates only where applying never waits for the disk.
        #expect(DictionaryMemoryStorage().appliesInMemory && LRUMemoryStorage(countLimit: 10).appliesInMemory)
        try withDataDirectory { directory in
            let keepsEveryone = try tier(in: directory)
            defer { keepsEveryone.close() }
            #expect(keepsEveryone.appliesInMemory)
        }
        try withDataDirectory { directory in
            let letsGo = try tier(in: directory, memory: LRUMemoryStorage(countLimit: 10))
            defer { letsGo.close() }
            #expect(!letsGo.appliesInMemory, "an evicted user's update reads their other resources from disk")
        }
        try withDataDirectory { directory in
            let diskOnly = try tier(in: directory, memory: nil)
            defer { diskOnly.close() }
            #expect(!diskOnly.appliesInMemory)
        }
    }

    @Test func anUpdateOfAnEvictedUserKeepsTheirOtherResourcesFromDisk() throws {
        try withDataDirectory { directory in
            let storage = try tier(in: directory, memory: LRUMemoryStorage(countLimit: 1))
            defer { storage.close() }
            let alice = jid("alice@example.com")
            storage.apply(available("alice@example.com/desk", priority: 5, show: .dnd), receivedAt: time(1))
            storage.apply(available("alice@example.com/phone"), receivedAt: time(2))
            storage.flush()
            storage.apply(available("bob@example.com/desk"), receivedAt: time(3))  // evicts alice
            storage.flush()
            #expect(storage.memory?.lookup(alice) == .lost(.countLimit))
            storage.apply(unavailable("alice@example.com/phone"), receivedAt: time(4))
            let shown = storage.get(alice)?.status
            #expect(shown?.isAvailable == true, "alice is still at her desk")
            #expect(shown?.presence.details.show == .dnd)
        }
    }

    @Test func aLookupIsLostOnlyWhenNeitherTierHoldsTheUser() throws {
        try withDataDirectory { directory in
            let storage = try tier(in: directory, memory: LRUMemoryStorage(countLimit: 1))
            defer { storage.close() }
            storage.apply(available("a@example.com/x"), receivedAt: time(1))
            storage.apply(available("b@example.com/x"), receivedAt: time(2))
            storage.flush()
            #expect(storage.lookup(jid("a@example.com")).presence != nil)
            #expect(storage.lookup(jid("nobody@example.com")) == .unknown)
            storage.remove(jid("a@example.com"))
            storage.flush()
            #expect(storage.lookup(jid("a@example.com")) == .unknown, "a caller's removal is gone from both tiers")
            #expect(storage.count == 1)
        }
    }
}

@Suite("The disk tier survives the process")
struct DiskTierRestartTests {
    @Test func aReopenedTierRestoresEveryUserAndSaysTheyAreRestored() throws {
        try withDataDirectory { directory in
            var written: [BareJID: UserPresence] = [:]
            do {
                let storage = try tier(in: directory)
                for index in 0 ..< 1000 {
                    storage.apply(
                        available(
                            "u\(index)@example.com/r\(index % 3)", priority: Int8(index % 100),
                            show: index % 2 == 0 ? .away : nil, status: "s\(index) ✓"),
                        receivedAt: time(Int64(index)))
                }
                storage.apply(unavailable("u7@example.com/r1"), receivedAt: time(2000))
                for key in storage.keys { written[key] = storage.get(key) }
                storage.close()
            }
            let reopened = try tier(in: directory)
            defer { reopened.close() }
            #expect(reopened.count == 1000)
            #expect(reopened.restoredCount == 1000)
            for (key, value) in written { #expect(reopened.get(key) == value, "\(key)") }
            let u1 = jid("u1@example.com")
            let asOf = try #require(reopened.restoredAsOf(u1))
            #expect(asOf == reopened.disk.lastWrite)
            reopened.apply(available("u1@example.com/r1", show: .chat), receivedAt: time(3000))
            #expect(reopened.restoredAsOf(u1) == nil, "written since: current")
            reopened.confirm(jid("u2@example.com"))
            #expect(reopened.restoredAsOf(jid("u2@example.com")) == nil, "confirmed by the source: current")
            #expect(reopened.restoredCount == 998)
        }
    }

    @Test func aLookupSaysWhichTierAnsweredAndWhenARestoredStatusWasCurrent() async throws {
        try await withDataDirectory { directory in
            do {
                let storage = try tier(in: directory)
                storage.apply(available("a@example.com/x"), receivedAt: time(1))
                storage.close()
            }
            let storage = try tier(in: directory, memory: LRUMemoryStorage(countLimit: 1))
            defer { storage.close() }
            storage.apply(available("b@example.com/x"), receivedAt: time(2))  // evicts the restored a
            let lookup = PresenceLookup(storage: storage)
            var fast = 0
            #expect(lookup.withStorageAnswers([jid("b@example.com")]) { _, _ in fast += 1 })
            #expect(!lookup.withStorageAnswers([jid("a@example.com")]) { _, _ in fast += 1 }, "a disk answer says so")
            #expect(fast == 1)
            let answers = await lookup.lookup([jid("a@example.com"), jid("b@example.com"), jid("c@example.com")])
            #expect(answers.map(\.origin) == [.disk, .storage, .none])
            #expect(answers[0].restoredAsOf == storage.restoredAt)
            #expect(answers[1].restoredAsOf == nil)
        }
    }

    @Test func theNewestWriteReachesDiskWhateverMixOfSetRemoveAndApplyCameBefore() throws {
        try withDataDirectory { directory in
            let alice = jid("alice@example.com")
            let bob = jid("bob@example.com")
            do {
                let storage = try tier(in: directory)
                storage.set(user(available("alice@example.com/desk", status: "set")), for: alice)
                storage.apply(available("alice@example.com/desk", status: "applied after the set"), receivedAt: time(5))
                storage.apply(available("bob@example.com/desk"), receivedAt: time(1))
                storage.flush()
                storage.remove(bob)
                storage.apply(available("bob@example.com/phone", status: "back"), receivedAt: time(6))
                storage.close()
            }
            let reopened = try tier(in: directory)
            defer { reopened.close() }
            #expect(reopened.get(alice)?.status?.presence.details.status == "applied after the set")
            #expect(reopened.get(bob)?.status?.presence.details.status == "back", "removed, then back in one flush")
            #expect(reopened.get(bob)?.availableResources.map(\.resource) == ["phone"])
        }
    }

    @Test func removeAllEmptiesTheDiskToo() throws {
        try withDataDirectory { directory in
            do {
                let storage = try tier(in: directory)
                storage.apply(available("a@example.com/x"), receivedAt: time(1))
                storage.flush()
                storage.removeAll()
                #expect(storage.lookup(jid("a@example.com")) == .unknown)
                storage.close()
            }
            let reopened = try tier(in: directory)
            defer { reopened.close() }
            #expect(reopened.count == 0)
        }
    }
}
