import PresenceStore
import PresenceTestSupport
import Testing

/// A prober that must never be asked: `withStorageAnswers` answers without the server or not at all.
private struct UnaskedProber: PresenceProber {
    func isProbeable(_ jid: BareJID) -> Bool { true }
    var isConnected: Bool { true }
    func probe(_ jids: Set<BareJID>, timeout: Duration) async throws -> [BareJID: UserPresence] {
        Issue.record("withStorageAnswers probed \(jids)")
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

    /// Each user's answer as `user state status`, or nil when the storage alone does not answer the batch.
    private func storageAnswers(_ lookup: PresenceLookup, _ jids: [BareJID], policy: LookupPolicy? = nil) -> [String]? {
        var answers: [String] = []
        let answered = lookup.withStorageAnswers(jids, policy: policy) { jid, stored in
            switch stored {
            case .present(let shown?):
                let status = shown.status.map { String(decoding: $0, as: UTF8.self) } ?? "-"
                answers.append("\(jid) \(shown.isAvailable ? "available" : "offline") \(status)")
            case .present(nil): answers.append("\(jid) empty")
            case .lost: answers.append("\(jid) lost")
            case .unknown: answers.append("\(jid) unknown")
            }
        }
        return answered ? answers : nil
    }

    @Test func aStorageHitIsAnsweredAtOnceUnderEveryPolicyButProbe() throws {
        let lookup = PresenceLookup(storage: storage, prober: UnaskedProber())
        let alice = jid("alice@example.com")
        #expect(storageAnswers(lookup, [alice]) == ["alice@example.com available In"])
        #expect(storageAnswers(lookup, [alice], policy: .cacheOnly) != nil)
        #expect(storageAnswers(lookup, [alice], policy: .probe) == nil, "probe always asks the server")
    }

    @Test func aMissNeedsTheServerUnlessThePolicyIsCacheOnly() throws {
        let lookup = PresenceLookup(storage: storage, prober: UnaskedProber())
        let batch = [jid("alice@example.com"), jid("bob@example.com")]
        #expect(storageAnswers(lookup, batch) == nil, "cache-else-probe would probe bob")
        #expect(
            storageAnswers(lookup, batch, policy: .cacheOnly)
                == ["alice@example.com available In", "bob@example.com unknown"])
        #expect(lookup.statistics == ProbeStatistics(), "nothing was counted as sent, refused or joined")
    }

    @Test func withoutAProberEveryLookupIsCacheOnly() throws {
        let lookup = PresenceLookup(storage: storage)
        #expect(
            storageAnswers(lookup, [jid("alice@example.com"), jid("bob@example.com")])
                == ["alice@example.com available In", "bob@example.com unknown"])
    }
}
