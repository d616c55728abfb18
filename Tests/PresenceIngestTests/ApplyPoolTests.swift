import Foundation
import PresenceIngest
import PresenceStore
import PresenceTestSupport
import Synchronization
import Testing
import XMPPStream

@Suite("An apply pool serves many feeders with a few threads, each feeder's stream in order")
struct ApplyPoolTests {
    /// One feeder's stream: several updates per user, all stamped alike, so only their order decides what is stored;
    /// ignored and rejected stanzas among them.
    private static func stream(feeder: Int, users: Int, rounds: Int) -> [UInt8] {
        var text = ""
        for round in 0 ..< rounds {
            for user in 0 ..< users {
                text += "<presence from='f\(feeder)u\(user)@example.com/desk'><status>\(round)</status></presence>"
                if user % 7 == 0 { text += "<iq type='get' id='x'/><presence from='f\(feeder)@'/>" }
            }
        }
        return Array(text.utf8)
    }

    @Test func feedersSharingTwoThreadsEachEndExactlyAsIfAppliedInline() throws {
        let pool = ApplyPool(threads: 2)
        let shared = DictionaryMemoryStorage()
        // Every status each user was shown, in the order the storage applied them. Recording is slow on purpose:
        // applying falls behind parsing, so lanes fill up and both threads always have a choice of batches.
        let seen = Mutex([BareJID: [Int]]())
        shared.setChangeObserver { change in
            guard let round = change.new.status.flatMap({ Int($0) }) else { return }
            seen.withLock { $0[change.key, default: []].append(round) }
            usleep(20)
        }
        // Few users and many rounds: a user's next update is a few stanzas on, in the same or the next batch.
        let streams = (0 ..< 12).map { Self.stream(feeder: $0, users: 10, rounds: 300) }
        let sessions = streams.indices.map { _ in
            IngestSession(storage: shared, clock: { time(1) }, applyingOn: pool)
        }
        let inline = DictionaryMemoryStorage()
        let inlineSessions = streams.indices.map { _ in IngestSession(storage: inline, clock: { time(1) }) }
        // Feeders take turns, each with a burst of reads of different sizes, as connections would: a burst queues
        // several batches in one lane while both threads look for work, and a read of a few stanzas whose lane is
        // idle is applied on the feeding thread, between batches the pool applies. Reads under 1,000 bytes ask to
        // be applied here, as the service's event loop does for small reads; the loop asks only while the lane is
        // idle, and here reads ask while it is busy too, when they must queue behind its batches.
        var offsets = Array(repeating: 0, count: streams.count)
        var turn = 0
        while offsets.indices.contains(where: { offsets[$0] < streams[$0].count }) {
            for feeder in streams.indices {
                for read in 0 ..< 1 + (feeder + turn) % 6 where offsets[feeder] < streams[feeder].count {
                    let size = 200 + (feeder * 733 + turn * 97 + read * 31) % 3_000
                    let end = min(offsets[feeder] + size, streams[feeder].count)
                    let chunk = streams[feeder][offsets[feeder] ..< end]
                    try sessions[feeder].feed(chunk, applyingHere: size < 1_000)
                    try inlineSessions[feeder].feed(chunk)
                    offsets[feeder] = end
                }
            }
            turn += 1
        }
        for (session, inlineSession) in zip(sessions, inlineSessions) {
            try session.finish()
            try inlineSession.finish()
            #expect(session.statistics == inlineSession.statistics)
        }
        #expect(shared.count == 12 * 10)
        var differing = 0
        for feeder in 0 ..< 12 {
            for user in 0 ..< 10 {
                let key = jid("f\(feeder)u\(user)@example.com")
                if shared.lookup(key) != inline.lookup(key) { differing += 1 }
            }
        }
        #expect(differing == 0, "each user's last update wins, as in stream order")
        let outOfOrder = seen.withLock { $0.values.filter { $0 != Array(0 ..< 300) }.count }
        #expect(outOfOrder == 0, "every user's updates applied one by one in stream order")
        #expect(shared.get(jid("f11u9@example.com"))?.status?.presence.details.status == "299")
    }

    @Test func countsArriveWithTheUpdatesTheyCountWithoutWaitingForTheEnd() async throws {
        let pool = ApplyPool(threads: 2)
        let storage = DictionaryMemoryStorage()
        let counted = Mutex(IngestStatistics())
        let session = IngestSession(
            storage: storage, applyingOn: pool,
            onBatchApplied: { batch in
                counted.withLock {
                    $0.stanzas += batch.stanzas
                    $0.addOutcomes(of: batch)
                }
            })
        let bytes = Self.stream(feeder: 0, users: 1_000, rounds: 3)
        let reference = IngestSession(storage: DictionaryMemoryStorage())
        try reference.feed(bytes)
        for start in stride(from: 0, to: bytes.count, by: 16_384) {
            await session.readyForInput()
            try session.feed(bytes[start ..< min(start + 16_384, bytes.count)])
        }
        // No `finish`: a live feeder's stream stays open, and its counts must not wait for its end.
        await session.applied()
        let expected = reference.statistics
        #expect(session.statistics.presenceUpdates == expected.presenceUpdates)
        #expect(session.statistics.ignored == expected.ignored)
        #expect(session.statistics.rejected == expected.rejected)
        let fromBatches = counted.withLock { $0 }
        #expect(fromBatches.stanzas == expected.stanzas, "every stanza is counted once it is applied")
        #expect(fromBatches.presenceUpdates == expected.presenceUpdates)
        #expect(
            fromBatches.rejectedTotal == expected.rejectedTotal && fromBatches.ignoredTotal == expected.ignoredTotal)
        #expect(storage.count == 1_000)
    }

    @Test func aLoneStanzaIsAppliedWithoutMoreInput() async throws {
        // A feeder that sends one presence and then nothing for minutes: it must not sit in a half-full batch.
        let storage = DictionaryMemoryStorage()
        let session = IngestSession(storage: storage, applyingOn: ApplyPool(threads: 1))
        try session.feed(Array("<presence from='alice@example.com/desk'><show>dnd</show></presence>".utf8))
        await session.applied()
        #expect(storage.get(jid("alice@example.com"))?.status?.presence.details.show == .dnd)
        #expect(session.statistics.presenceUpdates == 1)
    }
}
