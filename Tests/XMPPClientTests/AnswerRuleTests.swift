import PresenceModel
import PresenceStore
import PresenceTestSupport
import Testing

@testable import PresenceSource

/// The rule by which a member's answer becomes certain, whatever order the server sends its statements in.
@Suite("What the server said for certain about a member")
struct AnswerRuleTests {
    private let start = ContinuousClock.now
    private let settle = Duration.milliseconds(50)

    private func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    @Test func silenceIsNeverAnAnswer() {
        var member = MemberConfirmation()
        #expect(member.verdict == nil && member.isSilent)
        #expect(member.settle(at: at(10_000), quiet: settle) == nil, "nothing said, however long ago")
    }

    @Test func aBareUnavailableIsOfflineAtOnce() {
        var member = MemberConfirmation()
        member.record(unavailable("ann@corp.example"), at: at(0))
        #expect(member.settle(at: at(0), quiet: settle) == .offline)
    }

    @Test func lastActivityOfMoreThanZeroSecondsIsOfflineAndZeroIsNot() {
        var away = MemberConfirmation()
        away.recordLastActivity(seconds: 42, at: at(0))
        #expect(away.settle(at: at(0), quiet: settle) == .offline)

        var inSession = MemberConfirmation()
        inSession.recordLastActivity(seconds: 0, at: at(0))
        #expect(inSession.hasSession)
        #expect(inSession.settle(at: at(10_000), quiet: settle) == nil, "a session but no presence yet: not known")
    }

    @Test func anAvailablePresenceWinsOverLastActivityWhicheverArrivesFirst() {
        // The presence first (Prosody's order with mod_lastactivity, which counts from the last resource that left).
        var first = MemberConfirmation()
        first.record(available("ann@corp.example/desk"), at: at(0))
        first.recordLastActivity(seconds: 300, at: at(1))
        #expect(first.verdict == .available)
        // The last activity first, then a presence (a session opened in between).
        var second = MemberConfirmation()
        second.recordLastActivity(seconds: 300, at: at(0))
        second.record(available("ann@corp.example/desk"), at: at(1))
        #expect(second.verdict == .available)
    }

    @Test func anAvailableAnswerWaitsForTheMembersOtherResourcesToStopArriving() {
        var member = MemberConfirmation()
        member.record(available("ann@corp.example/desk"), at: at(0))
        #expect(member.settle(at: at(30), quiet: settle) == nil, "still within the settle window")
        member.record(available("ann@corp.example/phone"), at: at(40))
        #expect(member.settle(at: at(60), quiet: settle) == nil, "the window starts again at each presence")
        #expect(member.settle(at: at(90), quiet: settle) == .available)
        #expect(member.resources == ["desk", "phone"])
    }

    @Test func theSourceKnowsWhenAnAvailableAnswerWillBeFinalSoItWakesThenAndNotLater() {
        var member = MemberConfirmation()
        #expect(member.settles(quiet: settle) == nil, "nothing to wait for")
        member.record(available("ann@corp.example/desk"), at: at(0))
        #expect(member.settles(quiet: settle) == at(50))
        member.record(available("ann@corp.example/phone"), at: at(20))
        #expect(member.settles(quiet: settle) == at(70), "each presence moves it")
        #expect(member.settle(at: at(70), quiet: settle) == .available)
        #expect(member.settles(quiet: settle) == nil, "final: nothing more to wait for")

        var offline = MemberConfirmation()
        offline.record(unavailable("ann@corp.example"), at: at(0))
        #expect(offline.settles(quiet: settle) == nil, "an offline answer never waits")
    }

    @Test func aResourceLeavingSaysNothingAboutTheOthers() {
        var member = MemberConfirmation()
        member.record(available("ann@corp.example/desk"), at: at(0))
        member.record(unavailable("ann@corp.example/desk"), at: at(1))
        #expect(member.verdict == nil, "her phone may be online, its presence still on the way")
    }

    @Test func aFinalAnswerIsNotChangedByWhatFollows() {
        var member = MemberConfirmation()
        member.record(unavailable("ann@corp.example"), at: at(0))
        #expect(member.settle(at: at(0), quiet: settle) == .offline)
        member.record(available("ann@corp.example/desk"), at: at(5))
        #expect(member.final == .offline, "a later presence is a live change, applied as such")
    }

    @Test func keepOnlyRemovesTheResourcesTheServerDidNotReport() {
        let storage = DictionaryMemoryStorage()
        storage.apply(available("ann@corp.example/desk", priority: 5), receivedAt: time(0))
        storage.apply(available("ann@corp.example/phone", priority: 9, status: "on the train"), receivedAt: time(1))
        SnapshotReconciliation.keepOnly(["desk"], of: jid("ann@corp.example"), in: storage, at: time(10))
        let ann = storage.get(jid("ann@corp.example"))
        #expect(ann?.availableResources.map(\.resource) == ["desk"])
        SnapshotReconciliation.keepOnly([], of: jid("bob@corp.example"), in: storage, at: time(10))
        #expect(storage.lookup(jid("bob@corp.example")) == .unknown, "nobody stored, nothing written")
    }
}
