import Foundation
import PresenceDisk
import PresenceModel
import PresenceStore
import PresenceTestSupport
import Testing

/// Statuses restored from the disk tier are "as of" until the server has spoken about each member: the snapshot
/// either updates them or confirms them.
@Suite("A restored status is current again once the XMPP snapshot has reconciled it", .realServers)
struct RestoredStatusReconciliationTests {
    @Test(arguments: XMPPServerKind.allCases)
    func theSnapshotUpdatesOrConfirmsEveryRestoredMember(on server: XMPPServerKind) async throws {
        let directory = NSTemporaryDirectory() + "presence-restored-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let members = ["alice", "bob", "carol", "dave"]
        let serverInstance = try await server.start(
            accounts: Dictionary(uniqueKeysWithValues: (members + ["watcher"]).map { ($0, Organisation.password) }),
            groups: ["Staff": ["watcher"] + members])
        // What a previous run left on disk: alice, bob and carol at their desks yesterday, dave gone home.
        do {
            let previous = try TieredStorage(memory: DictionaryMemoryStorage(), disk: SQLitePresenceStore(directory: directory))
            for name in ["alice", "bob", "carol"] {
                previous.apply(available("\(name)@\(serverInstance.domain)/desk", status: "yesterday"), receivedAt: time(1))
            }
            previous.apply(unavailable("dave@\(serverInstance.domain)/desk"), receivedAt: time(1))
            previous.close()
        }
        let tier = try TieredStorage(memory: DictionaryMemoryStorage(), disk: SQLitePresenceStore(directory: directory))
        defer { tier.close() }
        let organisation = try Organisation(server: serverInstance, storage: tier)
        defer { organisation.stop() }
        #expect(tier.restoredCount == 4)
        #expect(tier.restoredAsOf(organisation.bare("carol")) != nil, "before the snapshot carol is as of yesterday")

        let current = Locked<[BareJID]>([])
        tier.setRestoredObserver { member in current.withLock { $0.append(member) } }
        let alice = try await organisation.member("alice")
        try await alice.available(status: "today")
        let bob = try await organisation.member("bob")
        try await bob.available(status: "yesterday")
        organisation.startWatching()
        #expect(try await organisation.snapshotComplete())

        #expect(organisation.shown("alice")?.details.status == "today")
        #expect(organisation.shown("bob")?.details.status == "yesterday")
        #expect(organisation.state(of: "carol") == .offline, "carol has no session: the server says so")
        #expect(organisation.state(of: "dave") == .offline)
        for name in members {
            #expect(tier.restoredAsOf(organisation.bare(name)) == nil, "\(name) is current after the snapshot")
        }
        #expect(tier.restoredCount == 0)
        // Each restored member's answer became current once, whether the status changed (alice, carol) or not
        // (bob, dave: only this observer hears of them).
        #expect(current.withLock { $0 }.sorted { $0.rawValue < $1.rawValue } == members.map { organisation.bare($0) })
        _ = (alice, bob)
    }
}
