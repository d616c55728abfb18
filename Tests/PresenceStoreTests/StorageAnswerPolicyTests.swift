import PresenceStore
import PresenceTestSupport
import Testing

/// A prober that must never be asked: `answersFromStorage` answers without the server or not at all.
private struct UnaskedProber: PresenceProber {
    func isProbeable(_ jid: BareJID) -> Bool { true }
    var isConnected: Bool { true }
    func probe(_ jids: Set<BareJID>) async throws -> [BareJID: UserPresence] {
        Issue.record("answersFromStorage probed \(jids)")
        return [:]
    }
}

@Suite("Answers without waiting only when the storage alone answers every JID")
struct StorageAnswerPolicyTests {
    private let storage: DictionaryMemoryStorage = {
        let storage = DictionaryMemoryStorage()
        storage.apply(available("alice@example.com/desk", status: "In"), receivedAt: time(1))
        return storage
    }()

    @Test func aStorageHitIsAnsweredAtOnceUnderEveryPolicyButProbe() throws {
        let lookup = PresenceLookup(storage: storage, prober: UnaskedProber())
        let alice = jid("alice@example.com")
        let answers = try #require(lookup.answersFromStorage([alice]))
        #expect(
            answers.map(\.origin) == [.storage] && answers[0].stored.presence?.status?.presence.details.status == "In")
        #expect(lookup.answersFromStorage([alice], policy: .cacheOnly) != nil)
        #expect(lookup.answersFromStorage([alice], policy: .probe) == nil, "probe always asks the server")
    }

    @Test func aMissNeedsTheServerUnlessThePolicyIsCacheOnly() throws {
        let lookup = PresenceLookup(storage: storage, prober: UnaskedProber())
        let batch = [jid("alice@example.com"), jid("bob@example.com")]
        #expect(lookup.answersFromStorage(batch) == nil, "cache-else-probe would probe bob")
        let cached = try #require(lookup.answersFromStorage(batch, policy: .cacheOnly))
        #expect(cached.map(\.origin) == [.storage, .none] && cached[1].probeFailure == nil)
        #expect(lookup.statistics == ProbeStatistics(), "nothing was counted as sent, refused or joined")
    }

    @Test func withoutAProberEveryLookupIsCacheOnly() throws {
        let lookup = PresenceLookup(storage: storage)
        let answers = try #require(lookup.answersFromStorage([jid("alice@example.com"), jid("bob@example.com")]))
        #expect(answers.map(\.stored) == [storage.lookup(jid("alice@example.com")), .unknown])
    }
}
