import Foundation
import PresenceModel
import PresenceSource
import PresenceTestSupport
import Testing

/// A shared roster group of everyone, as small and medium organisations set it up, with the server's list of
/// sessions where it has one (ejabberd's `mod_http_api`, granted to the watcher as the Deploying guide says).
@Suite("A group of everyone, with the server's list of sessions", .realServers)
struct SessionDirectoryAgainstServersTests {
    private static let people = (0 ..< 120).map { String(format: "m%03d", $0) }

    @Test(arguments: XMPPServerKind.allCases)
    func aGroupOfEveryoneIsLiveWithEveryOnlineMemberAvailableAndTheRestOffline(on server: XMPPServerKind) async throws {
        let organisation = try await Organisation(
            everyoneOn: server, members: Self.people, sessionsAPIAccount: "watcher")
        defer { organisation.stop() }
        let online = Array(Self.people.prefix(6))
        var clients: [MemberClient] = []
        for user in online {
            let client = try await organisation.member(user)
            try await client.available(status: "Here")
            clients.append(client)
        }

        organisation.startWatching()
        #expect(try await organisation.snapshotComplete())
        for user in online { #expect(organisation.state(of: user) == .available, "\(user)") }
        #expect(Self.people.dropFirst(online.count).allSatisfy { organisation.state(of: $0) == .offline })
        let status = organisation.source.status
        #expect(status.rosterSize == Self.people.count, "\(status)")
        if server == .ejabberd {
            #expect(status.sessionDirectoryAnswers >= 1 && status.sessionDirectoryError == nil, "\(status)")
        } else {
            #expect(status.sessionDirectoryAnswers == 0, "Prosody answers probes: no list is asked")
        }
        _ = clients
    }

    @Test func aListOfSessionsTheWatcherIsNotGrantedFallsBackToLastActivityAndSaysWhy() async throws {
        // Asked as an account the server does not grant the command: refused, and every member asked directly.
        let organisation = try await Organisation(
            everyoneOn: .ejabberd, members: Self.people, sessionsAPIAccount: "m000")
        defer { organisation.stop() }
        let bob = try await organisation.member("m001")
        try await bob.available(status: "Here")

        organisation.startWatching()
        #expect(try await organisation.snapshotComplete())
        let status = organisation.source.status
        #expect(status.sessionDirectoryAnswers == 0)
        #expect(status.sessionDirectoryError?.contains("403") == true, "\(status)")
        #expect(status.sessionDirectoryError?.contains("connected_users_vhost") == true, "\(status)")
        #expect(organisation.state(of: "m001") == .available)
        #expect(Self.people.filter { $0 != "m001" }.allSatisfy { organisation.state(of: $0) == .offline })
        _ = bob
    }

    @Test(arguments: [false, true])
    func aGroupOfEveryoneKeptInLDAPIsExactWithOrWithoutTheListOfSessions(asksSessions: Bool) async throws {
        let people = (0 ..< 40).map { String(format: "l%02d", $0) }
        let directory = try await onAThreadOfItsOwn {
            try OpenLDAPDirectory(
                port: freeLoopbackPort(), people: people + ["watcher"], group: "everyone", members: ["watcher"] + people)
        }
        defer { directory.stop() }
        let accounts = Dictionary(uniqueKeysWithValues: (people + ["watcher"]).map { ($0, Organisation.password) })
        let server = try await onAThreadOfItsOwn { try EjabberdServer(accounts: accounts, sharedRosters: directory) }
        let organisation = try Organisation(server: server, sessionsAPIAccount: asksSessions ? "watcher" : nil)
        defer { organisation.stop() }
        var clients: [MemberClient] = []
        for user in people.prefix(4) {
            let client = try await organisation.member(user)
            try await client.available(status: "In the directory")
            clients.append(client)
        }

        organisation.startWatching()
        #expect(try await organisation.snapshotComplete())
        let status = organisation.source.status
        #expect(status.rosterSize == people.count, "the group from the directory is the roster: \(status)")
        for user in people.prefix(4) { #expect(organisation.state(of: user) == .available, "\(user)") }
        #expect(people.dropFirst(4).allSatisfy { organisation.state(of: $0) == .offline })
        #expect(status.sessionDirectoryAnswers >= (asksSessions ? 1 : 0) && status.sessionDirectoryError == nil)
        _ = clients
    }
}
