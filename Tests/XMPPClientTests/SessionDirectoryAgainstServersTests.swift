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
}
