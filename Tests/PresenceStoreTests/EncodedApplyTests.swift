import PresenceTestSupport
import PresenceWorkload
import Testing

@testable import PresenceStore

/// The dictionary applies updates to users in their encoded form. These hold that path to the aggregation rules
/// `UserPresence.apply` defines: the bytes must be exactly the encoding of what it computes.
@Suite("Updates applied to encoded users give exactly what UserPresence.apply gives")
struct EncodedApplyTests {
    private static let resources: [String?] = [nil, "desk", "phone", "laptop", "tablet", "Desk", "ü-phone", ""]
    private static let statuses: [String?] = [
        nil, "", "Lunch", "In a meeting until three, ping me if urgent", "Krankgeschrieben – zurück am Montag",
        String(repeating: "long status ", count: 200),
    ]

    private func randomUpdate(_ random: inout SplitMix64, user: String) -> PresenceUpdate {
        let resource = Self.resources[random.below(Self.resources.count)]
        let details = PresenceDetails(
            show: random.below(3) == 0 ? nil : PresenceShow.allCases[random.below(PresenceShow.allCases.count)],
            status: Self.statuses[random.below(Self.statuses.count)],
            priority: Int8(truncatingIfNeeded: random.below(256) - 128),
            attendance: random.below(2) == 0 ? nil : Attendance.allCases[random.below(Attendance.allCases.count)])
        return PresenceUpdate(
            from: JID(bare: jid(user), resource: resource),
            availability: random.below(4) == 0 ? .unavailable : .available,
            details: details,
            delayedAt: random.below(5) == 0 ? PresenceTime(millisecondsSinceEpoch: Int64(random.below(1_000))) : nil)
    }

    /// Applies `update` both ways and checks the encoded bytes are the same; returns the new bytes.
    private func applyBothWays(
        _ update: PresenceUpdate, at time: PresenceTime, to encoded: [UInt8]?, model: inout UserPresence?
    ) -> [UInt8] {
        let scratch = ScratchBuffer(capacity: 16)
        let length =
            encoded.map { bytes in
                bytes.withUnsafeBytes {
                    UserPresenceCoding.apply(update, receivedAt: time, to: $0, into: scratch)
                }
            } ?? UserPresenceCoding.apply(update, receivedAt: time, to: nil, into: scratch)
        var result = [UInt8](repeating: 0, count: length)
        result.withUnsafeMutableBytes { scratch.copy(length, to: $0.baseAddress!) }

        var value = model ?? UserPresence()
        value.apply(update, receivedAt: time)
        model = value
        var expected = [UInt8](repeating: 0, count: UserPresenceCoding.encodedSize(of: value))
        expected.withUnsafeMutableBytes { UserPresenceCoding.encode(value, to: $0.baseAddress!) }
        #expect(result == expected, "after \(update)")
        let decoded = result.withUnsafeBytes { UserPresenceCoding.decode($0.baseAddress!) }
        #expect(decoded == value)
        return result
    }

    @Test func tenThousandRandomUpdatesOfOneUserMatchTheModelAfterEveryStep() {
        var random = SplitMix64(seed: 7)
        var encoded: [UInt8]?
        var model: UserPresence?
        for step in 0 ..< 10_000 {
            let update = randomUpdate(&random, user: "alice@example.com")
            // Times sometimes repeat, so ties are broken by arrival as UserPresence does.
            let time = PresenceTime(millisecondsSinceEpoch: Int64(step / 3))
            encoded = applyBothWays(update, at: time, to: encoded, model: &model)
        }
    }

    @Test func aNewResourceAtTheLimitReplacesTheLeastRecentlyUpdatedOneAsTheModelDoes() {
        var encoded: [UInt8]?
        var model: UserPresence?
        // Equal times for half of them: the oldest is then the earliest to arrive among the oldest time.
        for index in 0 ..< UserPresence.maximumResources {
            let update = available("alice@example.com/device\(index)", status: "on \(index)")
            let time = PresenceTime(millisecondsSinceEpoch: index < 100 ? 50 : Int64(index))
            encoded = applyBothWays(update, at: time, to: encoded, model: &model)
        }
        for extra in 0 ..< 20 {
            let update = available("alice@example.com/extra\(extra)")
            encoded = applyBothWays(update, at: PresenceTime(millisecondsSinceEpoch: 1), to: encoded, model: &model)
            #expect(model!.availableResources.count == UserPresence.maximumResources)
        }
        #expect(!model!.availableResources.contains { $0.resource == "device0" })
    }

    @Test func theDictionaryStoresWhatTheModelComputesForAThousandUsers() {
        let storage = DictionaryMemoryStorage(stripes: 4)
        var model: [BareJID: UserPresence] = [:]
        var random = SplitMix64(seed: 3)
        for step in 0 ..< 30_000 {
            let update = randomUpdate(&random, user: "user\(random.below(1_000))@example.com")
            let time = PresenceTime(millisecondsSinceEpoch: Int64(step))
            storage.apply(update, receivedAt: time)
            model[update.from.bare, default: UserPresence()].apply(update, receivedAt: time)
        }
        #expect(storage.count == model.count)
        for (key, value) in model { #expect(storage.get(key) == value) }
    }
}
