import PresenceModel
import PresenceTestSupport
import Testing
import XMPPClient

@testable import PresenceSource

/// What a server's list of sessions says about the members a round waits for, and what it leaves to last
/// activity.
@Suite("The server's session directory answers for every silent member in one question")
struct SessionDirectoryAnswerTests {
    private let ann = jid("ann@corp.example")
    private let bob = jid("bob@corp.example")
    private let cat = jid("cat@corp.example")

    private func finished(_ confirmations: Confirmations) -> (rounds: [Confirmations.Finished], offline: Set<BareJID>) {
        var offline: Set<BareJID> = []
        let pass = confirmations.settle(at: .now + .seconds(1), quiet: .milliseconds(10)) { settled in
            if settled.verdict == .offline { offline.insert(settled.member) }
        }
        return (pass.finished, offline)
    }

    /// The member each last-activity question in `bytes` asks about.
    private func askedLastActivity(_ bytes: [UInt8]) -> Set<String> {
        let text = String(decoding: bytes, as: UTF8.self)
        return Set(
            text.components(separatedBy: "<iq ").dropFirst().compactMap { iq in
                iq.split(separator: "to='").dropFirst().first.map { String($0.prefix { $0 != "'" }) }
            })
    }

    @Test func membersWithoutASessionAreOfflineAtOnceWithoutALastActivityQuestionEach() {
        let confirmations = Confirmations(maximumInFlight: 256, usesDirectory: true)
        let round = confirmations.open(.snapshot, members: [ann, bob, cat])
        #expect(confirmations.pingAnswered(round))
        #expect(confirmations.release().isEmpty, "the silent members wait for the directory, not one question each")
        #expect(confirmations.takeDirectoryQuestion())
        #expect(!confirmations.takeDirectoryQuestion(), "one question in flight at a time")

        let answered = ContinuousClock.now
        confirmations.directoryAnswered([bob], at: answered)
        let (rounds, offline) = finished(confirmations)
        #expect(rounds.isEmpty, "bob has a session: the round waits for his presence")
        #expect(offline == [ann, cat])
        #expect(confirmations.release().isEmpty, "bob's presence is on its way: nobody is asked at once")
        confirmations.recheckLastActivity(at: answered + .seconds(1), after: .seconds(1))
        #expect(askedLastActivity(confirmations.release()) == ["bob@corp.example"], "no presence within a second")
    }

    @Test func aMemberWithASessionWhosePresenceComesIsNeverAskedDirectly() {
        let confirmations = Confirmations(maximumInFlight: 256, usesDirectory: true)
        let round = confirmations.open(.snapshot, members: [ann])
        #expect(confirmations.pingAnswered(round))
        #expect(confirmations.takeDirectoryQuestion())
        let answered = ContinuousClock.now - .seconds(2)
        confirmations.directoryAnswered([ann], at: answered)
        confirmations.record(
            available("ann@corp.example/desk"), receivedAt: time(0), at: answered + .milliseconds(20))
        confirmations.recheckLastActivity(at: answered + .seconds(1), after: .seconds(1))
        #expect(confirmations.release().isEmpty)
        #expect(finished(confirmations).rounds.map(\.round) == [round])
    }

    @Test func aPresenceThatArrivedBeforeTheDirectorysAnswerStands() {
        let confirmations = Confirmations(maximumInFlight: 256, usesDirectory: true)
        let round = confirmations.open(.snapshot, members: [ann])
        #expect(confirmations.pingAnswered(round))
        #expect(confirmations.takeDirectoryQuestion())
        // Ann logs in after the server listed its sessions, and her presence overtakes the list.
        confirmations.record(available("ann@corp.example/desk"), receivedAt: time(0), at: .now - .seconds(1))
        confirmations.directoryAnswered([])
        let (rounds, offline) = finished(confirmations)
        #expect(rounds.map(\.round) == [round] && offline.isEmpty, "available wins over an older list")
    }

    @Test func aListMadeBeforeARoundOpenedDoesNotAnswerForIt() {
        let confirmations = Confirmations(maximumInFlight: 256, usesDirectory: true)
        let snapshot = confirmations.open(.snapshot, members: [ann])
        #expect(confirmations.pingAnswered(snapshot))
        #expect(confirmations.takeDirectoryQuestion())
        // A lookup asks about ann while the question is in flight: the list may be older than her login.
        let probe = confirmations.open(.probe, members: [ann])
        confirmations.directoryAnswered([])
        #expect(finished(confirmations).rounds.map(\.round) == [snapshot])
        #expect(confirmations.pending(probe)?.members == [ann], "the lookup waits for an answer of its own")
        #expect(confirmations.pingAnswered(probe))
        #expect(confirmations.takeDirectoryQuestion(), "asked in the next question")
        confirmations.directoryAnswered([])
        #expect(finished(confirmations).rounds.map(\.round) == [probe])
    }

    @Test func aFailedDirectoryHandsItsMembersToLastActivityForTheRestOfTheSession() {
        let confirmations = Confirmations(maximumInFlight: 256, usesDirectory: true)
        let first = confirmations.open(.snapshot, members: [ann, bob])
        #expect(confirmations.pingAnswered(first))
        #expect(confirmations.takeDirectoryQuestion())
        confirmations.directoryFailed()
        #expect(askedLastActivity(confirmations.release()) == ["ann@corp.example", "bob@corp.example"])
        let later = confirmations.open(.rosterAddition, members: [cat])
        #expect(confirmations.pingAnswered(later))
        #expect(!confirmations.isDirectoryQuestionDue)
        #expect(askedLastActivity(confirmations.release()) == ["cat@corp.example"])

        confirmations.reset()
        let next = confirmations.open(.snapshot, members: [ann])
        #expect(confirmations.pingAnswered(next))
        #expect(confirmations.isDirectoryQuestionDue, "the next session asks the directory again")
    }

    @Test func withoutADirectoryEverySilentMemberIsAskedLastActivity() {
        let confirmations = Confirmations(maximumInFlight: 256)
        let round = confirmations.open(.snapshot, members: [ann, bob])
        #expect(confirmations.pingAnswered(round))
        #expect(!confirmations.isDirectoryQuestionDue && !confirmations.takeDirectoryQuestion())
        #expect(askedLastActivity(confirmations.release()) == ["ann@corp.example", "bob@corp.example"])
    }
}
