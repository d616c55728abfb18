import Foundation
import PresenceStore
import PresenceTestSupport
import PresenceWire
import PresenceWorkload
import Testing

/// The query API writes storage answers straight from the storage's memory (``ShownPresence``). These hold that
/// path to the one the router takes: lookup, aggregate, build the result, write it. The bytes must be the same.
@Suite("Answers written from the storage in place are byte for byte the results the router writes")
struct StorageAnswerWritingTests {
    private static let resources: [String?] = [nil, "desk", "phone", "laptop", "Desk", "ü-phone", "a/b"]
    private static let statuses: [String?] = [
        nil, "", "Lunch", "Say \"hi\"\n\\ back at 3", "Krankgeschrieben – zurück am Montag", "日本",
        // At the encoding's limit, cut one byte into a two-byte character: the answer repairs the end.
        "a" + String(repeating: "ü", count: PresenceDetails.maximumStatusBytes / 2),
    ]

    /// Random updates for `users` users: several resources each, tied priorities and times, unavailable ones.
    private func randomUpdates(count: Int, users: Int, seed: UInt64) -> [(PresenceUpdate, PresenceTime)] {
        var random = SplitMix64(seed: seed)
        return (0 ..< count).map { _ in
            let details = PresenceDetails(
                show: random.below(3) == 0 ? nil : PresenceShow.allCases[random.below(PresenceShow.allCases.count)],
                status: Self.statuses[random.below(Self.statuses.count)],
                priority: Int8(random.below(3)) - 1,
                attendance: random.below(2) == 0 ? nil : Attendance.allCases[random.below(Attendance.allCases.count)])
            let update = PresenceUpdate(
                from: JID(
                    bare: jid("user\(random.below(users))@example.com"), resource: Self.resources[random.below(7)]),
                availability: random.below(4) == 0 ? .unavailable : .available, details: details,
                delayedAt: random.below(4) == 0 ? time(Int64(random.below(3))) : nil)
            return (update, time(Int64(random.below(3))))
        }
    }

    private func routerBytes(_ jid: BareJID, _ storage: any MemoryStorage, live: Bool?) -> [UInt8] {
        var writer = JSONWriter()
        PresenceQueryResult(jid: jid, stored: storage.lookup(jid), live: live).write(to: &writer)
        return writer.bytes
    }

    private func inPlaceBytes(_ jid: BareJID, _ storage: any MemoryStorage, live: Bool?) -> [UInt8] {
        var writer = JSONWriter()
        storage.withShownPresence(jid) { PresenceQueryResult.write(jid: jid, stored: $0, live: live, to: &writer) }
        return writer.bytes
    }

    @Test(arguments: ["dictionary", "lru", "nscache"])
    func everyUsersAnswerIsTheSameBytesBothWays(kind: String) {
        let storage: any MemoryStorage =
            switch kind {
            case "dictionary": DictionaryMemoryStorage()
            case "lru": LRUMemoryStorage(countLimit: 150)  // evicts: some users answer `lost`
            default: NSCacheMemoryStorage()
            }
        for (update, receivedAt) in randomUpdates(count: 5_000, users: 200, seed: 11) {
            storage.apply(update, receivedAt: receivedAt)
        }
        var states: Set<String> = []
        for index in 0 ..< 220 {  // the last twenty were never seen
            let user = jid("user\(index)@example.com")
            let live: Bool? = [nil, true, false][index % 3]
            let expected = routerBytes(user, storage, live: live)
            #expect(inPlaceBytes(user, storage, live: live) == expected, "\(user)")
            states.insert(PresenceQueryResult(jid: user, stored: storage.lookup(user)).state.rawValue)
        }
        #expect(states.isSuperset(of: ["available", "offline", "unknown"]), "every kind of answer was compared")
        if kind == "lru" { #expect(states.contains("lost")) }
    }

    @Test func aBatchOfStorageAnswersIsTheDocumentTheRouterWrites() throws {
        let storage = DictionaryMemoryStorage()
        for (update, receivedAt) in randomUpdates(count: 2_000, users: 100, seed: 12) {
            storage.apply(update, receivedAt: receivedAt)
        }
        let lookup = PresenceLookup(storage: storage)
        let jids = (0 ..< 120).map { jid("user\($0)@example.com") }
        var inPlace = JSONWriter()
        #expect(QueryDocument.writeStorageAnswers(jids, from: lookup, policy: nil, live: true, to: &inPlace))
        var routed = JSONWriter()
        let answers = jids.map { jid in
            let stored = storage.lookup(jid)
            let origin: AnswerOrigin = if case .present = stored { .storage } else { .none }
            return LookupAnswer(jid: jid, stored: stored, origin: origin)
        }
        QueryDocument.write(answers: answers, live: true, to: &routed)
        #expect(inPlace.bytes == routed.bytes)
        #expect(try JSONDecoder().decode(QueryDocument.self, from: Data(inPlace.bytes)).results.count == 120)
    }
}
