import Foundation
import PresenceModel
import PresenceSource
import PresenceStore
import PresenceTestSupport
import Testing
import XMPPClient

/// The periodic resync that bounds how long a status the server forgot stays shown, against real Prosody and
/// ejabberd: whom it asks, and what it costs the server.
@Suite("The resync against real Prosody and ejabberd", .realServers)
struct ResyncAgainstServersTests {
    @Test func theDefaultsBoundAForgottenStatusToUnderAMinuteForAThousandPeopleAllOnline() {
        let resync = ResyncConfiguration.default
        #expect(resync.members == .available)
        #expect(resync.stalenessBound(askedMembers: 1_000) == .seconds(50))
        // 10,000 people, 5% of them online: the offline ones are not asked.
        #expect(resync.stalenessBound(askedMembers: 500) == .seconds(40))
    }

    @Test(arguments: XMPPServerKind.allCases)
    func byDefaultAResyncAsksOnlyTheMembersShownAvailable(on server: XMPPServerKind) async throws {
        let organisation = try await Organisation(
            on: server, members: ["alice", "bob", "carol", "dave"],
            resync: ResyncConfiguration(interval: .milliseconds(300)))
        defer { organisation.stop() }
        let alice = try await organisation.member("alice")
        try await alice.available(status: "Here")
        organisation.startWatching()
        #expect(try await organisation.snapshotComplete())
        #expect(try await eventually(timeout: TestDeadline.condition) { organisation.source.status.resyncs >= 2 })
        let status = organisation.source.status
        #expect(status.resyncProbed == status.resyncs, "one member asked per resync: \(status)")
        #expect(status.resyncCorrected == 0)
        #expect(organisation.state(of: "alice") == .available && organisation.state(of: "bob") == .offline)

        // bob comes online: from then on, each resync asks him too; alice leaves: once confirmed, she is not.
        let bob = try await organisation.member("bob")
        try await bob.available(status: "Also here")
        #expect(try await eventually { organisation.state(of: "bob") == .available })
        alice.logOff()
        #expect(try await eventually { organisation.state(of: "alice") == .offline })
        // Her resource's unavailable presence leaves her a candidate until a resync hears the server confirm her
        // offline: the resync under way when she left may have asked her before she did, the next one asks her
        // and hears it. Resyncs run one after another, so from the second one done after she left, none asks her.
        let left = organisation.source.status
        #expect(
            try await eventually(timeout: TestDeadline.condition) {
                organisation.source.status.resyncs >= left.resyncs + 2
            })
        let before = organisation.source.status
        #expect(
            try await eventually(timeout: TestDeadline.condition) {
                organisation.source.status.resyncs >= before.resyncs + 2
            })
        let after = organisation.source.status
        #expect(
            after.resyncProbed - before.resyncProbed == after.resyncs - before.resyncs, "\(left) \(before) \(after)")
        _ = bob
    }

    @Test(arguments: XMPPServerKind.allCases)
    func askingEveryoneAsksTheOfflineMembersToo(on server: XMPPServerKind) async throws {
        let organisation = try await Organisation(
            on: server, members: ["alice", "bob", "carol", "dave"],
            resync: ResyncConfiguration(interval: .milliseconds(300), members: .all))
        defer { organisation.stop() }
        let alice = try await organisation.member("alice")
        try await alice.available(status: "Here")
        organisation.startWatching()
        #expect(try await organisation.snapshotComplete())
        #expect(try await eventually(timeout: TestDeadline.condition) { organisation.source.status.resyncs >= 2 })
        let status = organisation.source.status
        #expect(status.resyncProbed == 4 * status.resyncs, "\(status)")
        #expect(organisation.state(of: "carol") == .offline && organisation.state(of: "alice") == .available)
        _ = alice
    }
}
