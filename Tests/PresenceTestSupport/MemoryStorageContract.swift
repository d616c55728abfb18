import PresenceStore
import Testing

/// The `MemoryStorage` contract as one call, like swift-collections' `checkCollection`: a storage's tests call
/// ``checkMemoryStorageContract(_:)`` with its kind and get every check below. Each check builds fresh storages
/// from the kind, so checks never see each other's users.
package func checkMemoryStorageContract(_ kind: MemoryStorageKind) async throws {
    let contract = MemoryStorageContract(kind: kind)
    try contract.setGetRemoveAndCount()
    try contract.thePartsOfTheKeysHoldEveryKeyOnce()
    try contract.updateSeesNilForAbsentUsersAndNilRemoves()
    try contract.valuesRoundTripExactly()
    try contract.applyAggregatesLikeUserPresence()
    try contract.onlyVisibleChangesArePublished()
    try contract.removalsArePublishedWithTheirCause()
    try contract.theObserverMayCallBackIntoTheStorage()
    try contract.withoutAnObserverNothingIsPublished()
    try contract.pressureIsAccounted()
    if kind.evicts && kind.limits.contains(.countLimit) {
        try contract.evictionsAreLossesAndStoringAgainIsARefill()
    }
    try await contract.concurrentUpdatesOfTheSameAndDifferentUsersLoseNothing()
    try await contract.concurrentChangesArePublishedInTheOrderTheyHappened()
}

private struct MemoryStorageContract {
    let kind: MemoryStorageKind

    var label: Comment { "storage \(kind.name)" }

    func setGetRemoveAndCount() throws {
        let storage = try kind.make()
        let alice = jid("alice@example.com")
        let bob = jid("bob@example.com")
        #expect(storage.name == kind.name, label)
        #expect(storage.lookup(alice) == .unknown, label)
        let value = user(available("alice@example.com/desk", priority: 5, status: "In the office"))
        storage.set(value, for: alice)
        storage.set(user(available("bob@example.com/phone")), for: bob)
        #expect(storage.get(alice) == value, label)
        #expect(storage.count == 2, label)
        #expect(Set(storage.keys) == [alice, bob], label)
        #expect(storage.remove(alice) == value, label)
        #expect(storage.lookup(alice) == .unknown, "a caller's removal is not a loss: \(kind.name)")
        #expect(storage.count == 1, label)
        storage.set(user(available("bob@example.com/desk")), for: bob)
        #expect(storage.statistics.removals[.replaced] == 1, "a set over a held user is a replacement: \(kind.name)")
        storage.removeAll()
        #expect(storage.count == 0, label)
        #expect(storage.lookup(bob) == .unknown, label)
        #expect(storage.statistics.removals[.explicit] == 2, label)
        #expect(storage.statistics.lost == 0, label)
    }

    func thePartsOfTheKeysHoldEveryKeyOnce() throws {
        let storage = try kind.make()
        // More users than a storage has parts, so that most parts hold some and some may hold none.
        let keys = (0 ..< 1_000).map { jid("person\($0)@example.com") }
        for key in keys { storage.set(user(available("\(key.rawValue)/desk")), for: key) }
        let parts = (0 ..< storage.keyPartCount).map { storage.keys(inPart: $0) }
        let walked = parts.flatMap { $0 }
        #expect(storage.keyPartCount >= 1, label)
        #expect(walked.count == Set(walked).count, "a key in two parts: \(kind.name)")
        #expect(Set(walked) == Set(storage.keys), label)
        #expect(Set(walked) == Set(keys) || kind.evicts, "a storage that keeps everyone walks everyone: \(kind.name)")
        #expect(storage.keys(inPart: storage.keyPartCount).isEmpty, "past the last part: \(kind.name)")
    }

    func updateSeesNilForAbsentUsersAndNilRemoves() throws {
        let storage = try kind.make()
        let alice = jid("alice@example.com")
        let sawNil = storage.update(alice) { value -> Bool in
            defer { value = user(available("alice@example.com/desk")) }
            return value == nil
        }
        #expect(sawNil, label)
        #expect(storage.get(alice)?.status?.isAvailable == true, label)
        storage.update(alice) { $0 = nil }
        #expect(storage.lookup(alice) == .unknown, label)
        #expect(storage.count == 0, label)
    }

    func valuesRoundTripExactly() throws {
        let storage = try kind.make()
        var value = UserPresence()
        value.apply(
            available(
                "Ünïcode@example.com/Desk ✓", priority: -128, show: .xa, status: String(repeating: "é", count: 300)),
            receivedAt: time(1))
        value.apply(
            PresenceUpdate(
                from: try! JID("ünïcode@example.com/phone"), availability: .available,
                details: PresenceDetails(show: .chat, status: nil, priority: 127, attendance: .businessTrip),
                delayedAt: PresenceTime(millisecondsSinceEpoch: -5)), receivedAt: time(2))
        value.apply(
            PresenceUpdate(
                from: try! JID("ünïcode@example.com/tablet"), availability: .unavailable,
                details: PresenceDetails(status: "", attendance: .sickLeave)), receivedAt: time(3))
        let key = jid("ünïcode@example.com")
        storage.set(value, for: key)
        #expect(storage.get(key) == value, label)
    }

    func applyAggregatesLikeUserPresence() throws {
        let storage = try kind.make()
        storage.apply(available("alice@example.com/desk", priority: 10), receivedAt: time(1))
        storage.apply(available("alice@example.com/phone", priority: 0, show: .away), receivedAt: time(2))
        storage.apply(unavailable("alice@example.com/desk"), receivedAt: time(3))
        #expect(storage.get(jid("alice@example.com"))?.status?.presence.resource == "phone", label)
    }

    func onlyVisibleChangesArePublished() throws {
        let storage = try kind.make()
        let changes = Recorder<StorageChange>()
        storage.setChangeObserver { changes.append($0) }
        let alice = jid("alice@example.com")
        storage.apply(
            available("alice@example.com/desk", priority: 5, show: .dnd, status: "Focus"), receivedAt: time(1))
        // A second device with a lower priority shows nothing new; a new priority on the same device neither.
        storage.apply(available("alice@example.com/phone", priority: 0, show: .away), receivedAt: time(2))
        storage.apply(
            available("alice@example.com/desk", priority: 6, show: .dnd, status: "Focus"), receivedAt: time(3))
        storage.apply(
            available("alice@example.com/desk", priority: 6, show: .dnd, status: "Lunch"), receivedAt: time(4))
        storage.apply(unavailable("alice@example.com", attendance: .offWork), receivedAt: time(5))
        let dnd = VisibleStatus(state: .available, show: .dnd, status: "Focus")
        let lunch = VisibleStatus(state: .available, show: .dnd, status: "Lunch")
        let offline = VisibleStatus(state: .offline, attendance: .offWork)
        #expect(
            changes.all == [
                StorageChange(key: alice, old: .unknown, new: dnd, cause: .update),
                StorageChange(key: alice, old: dnd, new: lunch, cause: .update),
                StorageChange(key: alice, old: lunch, new: offline, cause: .update),
            ], label)
        changes.removeAll()
        storage.set(storage.get(alice)!, for: alice)
        #expect(changes.all.isEmpty, "storing the same value again changes nothing on screen: \(kind.name)")
    }

    func removalsArePublishedWithTheirCause() throws {
        let storage = try kind.make()
        let changes = Recorder<StorageChange>()
        storage.setChangeObserver { changes.append($0) }
        for name in ["a", "b", "c"] { storage.apply(available("\(name)@example.com/desk"), receivedAt: time(1)) }
        changes.removeAll()
        storage.remove(jid("a@example.com"))
        storage.update(jid("b@example.com")) { $0 = nil }
        storage.removeAll()
        let online = VisibleStatus(state: .available)
        #expect(changes.all.count == 3, label)
        #expect(
            Set(changes.all)
                == Set(
                    ["a", "b", "c"].map {
                        StorageChange(
                            key: jid("\($0)@example.com"), old: online, new: .unknown, cause: .removal(.explicit))
                    }), label)
    }

    func theObserverMayCallBackIntoTheStorage() throws {
        let storage = try kind.make()
        let seen = Recorder<StoredPresence>()
        storage.setChangeObserver { change in
            seen.append(storage.lookup(change.key))  // would deadlock if called under the storage's lock
            if change.new.state == .available, change.key == jid("first@example.com") {
                storage.apply(available("second@example.com/desk"), receivedAt: time(2))  // a change from inside
            }
        }
        storage.apply(available("first@example.com/desk"), receivedAt: time(1))
        #expect(seen.all.count == 2, "the change made by the observer is delivered after it returns: \(kind.name)")
        #expect(storage.count == 2, label)
        // The observer holds the storage and the storage holds the observer: taking it away ends the cycle
        // (LeakSanitizer reported this test's storage as leaked without it).
        storage.setChangeObserver(nil)
    }

    func withoutAnObserverNothingIsPublished() throws {
        let storage = try kind.make()
        let changes = Recorder<StorageChange>()
        storage.setChangeObserver { changes.append($0) }
        storage.apply(available("a@example.com/desk"), receivedAt: time(1))
        storage.setChangeObserver(nil)
        storage.apply(available("a@example.com/desk", show: .away), receivedAt: time(2))
        storage.remove(jid("a@example.com"))
        #expect(changes.all.count == 1, label)
    }

    func pressureIsAccounted() throws {
        let storage = try kind.make()
        let changes = Recorder<StorageChange>()
        for index in 0 ..< 10 { storage.apply(available("u\(index)@example.com/desk"), receivedAt: time(1)) }
        storage.setChangeObserver { changes.append($0) }
        let response = storage.handle(.critical)
        #expect(response.entriesBefore == 10, label)
        #expect(response.entriesAfter == storage.count, label)
        #expect(response.evicted == 10 - storage.count, label)
        #expect(storage.statistics.pressureEvents[.critical] == 1, label)
        #expect(storage.statistics.lost == response.evicted, label)
        #expect(changes.all.count == response.evicted, "every user dropped under pressure is a change: \(kind.name)")
        #expect(changes.all.allSatisfy { $0.cause == .removal(.pressure) && $0.new == .lost(.pressure) }, label)
        if !kind.evicts { #expect(response.evicted == 0, "a non-evicting storage drops nothing: \(kind.name)") }
    }

    func evictionsAreLossesAndStoringAgainIsARefill() throws {
        let storage = try kind.make(StorageConfiguration(countLimit: 2))
        let changes = Recorder<StorageChange>()
        storage.setChangeObserver { changes.append($0) }
        for name in ["a", "b", "c"] { storage.apply(available("\(name)@example.com/desk"), receivedAt: time(1)) }
        #expect(storage.count == 2, label)
        let evicted = changes.all.filter { $0.cause == .removal(.countLimit) }
        #expect(evicted.count == 1, label)
        guard let lostKey = evicted.first?.key else { return }
        #expect(storage.lookup(lostKey) == .lost(.countLimit), label)
        #expect(evicted.first?.new == .lost(.countLimit), label)
        #expect(storage.statistics.lost == 1, label)
        changes.removeAll()
        storage.remove(storage.keys.first { $0 != lostKey }!)  // make room, so the refill stays
        changes.removeAll()
        storage.apply(available("\(lostKey)/desk", show: .chat), receivedAt: time(2))
        #expect(
            changes.all.first
                == StorageChange(
                    key: lostKey, old: .lost(.countLimit), new: VisibleStatus(state: .available, show: .chat),
                    cause: .refill), label)
        #expect(storage.lookup(lostKey).presence != nil, label)
        #expect(storage.statistics.lost == 0, label)
        // Evict again, then remove the lost user on purpose: no longer lost, only unknown, and screens learn it.
        for name in ["x", "y"] { storage.apply(available("\(name)@example.com/desk"), receivedAt: time(3)) }
        let lostAgain = ["a", "b", "c", "x", "y"].map { jid("\($0)@example.com") }.first { key in
            if case .lost = storage.lookup(key) { return true } else { return false }
        }
        #expect(lostAgain != nil, label)
        if let lostAgain {
            changes.removeAll()
            #expect(storage.remove(lostAgain) == nil, label)
            #expect(storage.lookup(lostAgain) == .unknown, "a caller's removal forgets a loss: \(kind.name)")
            #expect(changes.all.map(\.new) == [.unknown], label)
        }
    }

    func concurrentUpdatesOfTheSameAndDifferentUsersLoseNothing() async throws {
        let storage = try kind.make()
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
                            storage.apply(
                                available("\(account)/t\(task)-\(step)", priority: Int8(task)),
                                receivedAt: time(Int64(step)))
                            if step > 0 {
                                storage.apply(
                                    unavailable("\(account)/t\(task)-\(step - 1)"), receivedAt: time(Int64(step)))
                            }
                        }
                    }
                }
            }
        }
        for account in shared {
            let resources = Set(storage.get(jid(account))?.availableResources.map(\.resource) ?? [])
            #expect(resources == Set((0 ..< tasks).map { "t\($0)-\(steps - 1)" }), "\(account) in \(kind.name)")
            #expect(storage.get(jid(account))?.status?.presence.details.priority == Int8(tasks - 1), label)
        }
        for task in 0 ..< tasks {
            #expect(
                storage.get(jid("own\(task)@example.com"))?.availableResources.map(\.resource) == [
                    "t\(task)-\(steps - 1)"
                ], label)
        }
        #expect(storage.count == shared.count + tasks, label)
    }

    /// Changes to one user from many tasks arrive as an unbroken chain (each change starts where the previous
    /// one ended) that ends at what the storage holds: a screen that applies them never shows an old status last.
    func concurrentChangesArePublishedInTheOrderTheyHappened() async throws {
        let storage = try kind.make()
        let changes = Recorder<StorageChange>()
        storage.setChangeObserver { changes.append($0) }
        let shows: [PresenceShow?] = [nil, .away, .dnd, .xa, .chat]
        await withTaskGroup(of: Void.self) { group in
            for task in 0 ..< 4 {
                group.addTask {
                    for step in 0 ..< 400 {
                        let account = "user\(step % 3)@example.com"
                        storage.apply(
                            available("\(account)/desk", show: shows[(step + task) % shows.count]), receivedAt: time(1))
                    }
                }
            }
        }
        for index in 0 ..< 3 {
            let key = jid("user\(index)@example.com")
            let chain = changes.all.filter { $0.key == key }
            #expect(chain.first?.old == .unknown, label)
            let broken = zip(chain, chain.dropFirst()).filter { $0.new != $1.old }
            #expect(
                broken.isEmpty,
                "\(broken.count) changes of \(key) did not start where the previous one ended: \(kind.name)")
            #expect(chain.last?.new == VisibleStatus(storage.lookup(key)), label)
        }
    }
}
