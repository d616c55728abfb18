import PresenceModel
import PresenceTestSupport
import Testing
import XMPPClient

@testable import PresenceSource

/// Lookups' probes meet a server's read limit as the snapshot's questions do, and the limit is named the same way.
@Suite("A lookup storm held back by the server's read limit is named")
struct ProbeReadLimitTests {
    /// Lookups of `membersPerRound` members every 100 ms for `seconds`, each round `bytes` long, read by the
    /// server at `readPerSecond` bytes a second after a burst of `burst` bytes; a lookup gives up after 2 s (its
    /// round is closed, its bytes still on their way). Returns what the detector said.
    private func storm(
        membersPerRound: Int, bytes: Int, readPerSecond: Int, burst: Int = 20_000, seconds: Int
    ) -> [ReadRateLimitDetector.Change] {
        let confirmations = Confirmations(maximumInFlight: 256)
        let start = ContinuousClock.now
        var written: [(id: String, members: Set<BareJID>, end: Int, at: ContinuousClock.Instant)] = []
        var total = 0
        var changes: [ReadRateLimitDetector.Change] = []
        for tick in 0 ..< seconds * 10 {
            let now = start + .milliseconds(100 * tick)
            let members = Set((0 ..< membersPerRound).map { jid("m\(tick)-\($0)@corp.example") })
            let id = confirmations.open(.probe, members: members)
            confirmations.written(id, bytes: bytes, members: membersPerRound, at: now)
            total += bytes
            written.append((id, members, total, now))
            let read = min(total, burst + readPerSecond * tick / 10)
            while let first = written.first, first.end <= read {
                // Prosody's way, in order: an unavailable presence for each member without a session, then the
                // ping's answer.
                for member in first.members {
                    confirmations.record(unavailable(member.rawValue), receivedAt: time(0), at: now)
                }
                _ = confirmations.pingAnswered(first.id, at: now)
                written.removeFirst()
            }
            for round in written where now - round.at >= .seconds(2) { confirmations.close(round.id) }
            if let change = confirmations.pace(at: now) { changes.append(change) }
        }
        return changes
    }

    @Test func probesReadAtProsodysShippedRateAreNamedAsItsLimit() throws {
        // 400 probes a second of about 55 bytes each (twice the default --probe-rate) against mod_limits' 10 kB/s
        // and its 2 s of burst.
        let changes = storm(membersPerRound: 40, bytes: 2_200, readPerSecond: 10_000, seconds: 10)
        guard case .began(let limit) = try #require(changes.first) else {
            Issue.record("no limit: \(changes)")
            return
        }
        let named = ServerReadLimit(
            bytesPerSecond: limit.bytesPerSecond, answersPerSecond: limit.answersPerSecond, waiting: limit.waiting,
            since: .now())
        #expect(named.likelySetting?.contains("mod_limits") == true, "\(limit)")
        #expect((150 ... 210).contains(Int(limit.answersPerSecond)), "probes read a second: \(limit)")
    }

    @Test func probesReadAsFastAsTheyAreWrittenAreNoLimit() {
        let changes = storm(membersPerRound: 20, bytes: 1_100, readPerSecond: 1_000_000, seconds: 10)
        #expect(changes.isEmpty, "\(changes)")
    }
}
