import Foundation
import Logging
import PresenceModel
import PresenceSource
import PresenceStore
import PresenceTestSupport
import Testing
import XMPPClient
import XMPPStream

@Suite("The XMPP source against real Prosody and ejabberd", .realServers)
struct XMPPSourceAgainstServersTests {
    @Test(arguments: XMPPServerKind.allCases) func theSnapshotHasEveryOnlineMembersShowStatusPriorityAndResourcesAndTheRestOffline(on server: XMPPServerKind) async throws {
        let organisation = try await Organisation(on: server, members: ["alice", "bob", "carol"], outsiders: ["dave"])
        defer { organisation.stop() }
        let alicePhone = try await organisation.member("alice", resource: "phone")
        try await alicePhone.available(show: "away", status: "commuting", priority: 5)
        let aliceDesk = try await organisation.member("alice", resource: "desk")
        try await aliceDesk.available(show: "dnd", status: "In a meeting", priority: 10)
        let bob = try await organisation.member("bob")
        try await bob.available(show: "chat", status: "Free to talk")
        let dave = try await organisation.member("dave")
        try await dave.available()

        organisation.startWatching()
        #expect(try await organisation.snapshotComplete())

        let alice = try #require(organisation.presence(of: "alice").presence)
        #expect(Set(alice.availableResources.map(\.resource)) == ["phone", "desk"])
        #expect(organisation.shown("alice")?.resource == "desk")
        #expect(organisation.shown("alice")?.details.show == .dnd)
        #expect(organisation.shown("alice")?.details.status == "In a meeting")
        #expect(organisation.shown("alice")?.details.priority == 10)
        #expect(organisation.shown("bob")?.details.show == .chat)
        #expect(organisation.state(of: "carol") == .offline, "a member with no session is known to be offline")
        #expect(organisation.state(of: "dave") == .unknown, "someone outside the roster stays unknown")
        let status = organisation.source.status
        #expect(status.connected && status.rosterSize == 3)
        // Three available resources; Prosody also answers the probe of an offline member with an unavailable
        // presence (carol's), ejabberd with nothing (last activity says she has no session).
        #expect(status.presencesReceived == (server == .prosody ? 4 : 3))
        #expect(status.snapshotUnconfirmed == 0 && status.warning == nil, "\(status)")
        _ = (alicePhone, aliceDesk, bob, dave)
    }

    @Test(arguments: XMPPServerKind.allCases) func liveChangesArriveAndMembersLogOffResourceByResource(on server: XMPPServerKind) async throws {
        let organisation = try await Organisation(on: server, members: ["alice"])
        defer { organisation.stop() }
        organisation.startWatching()
        #expect(try await organisation.snapshotComplete())
        #expect(organisation.state(of: "alice") == .offline)

        let desk = try await organisation.member("alice", resource: "desk")
        try await desk.available(status: "Writing the report", priority: 1)
        #expect(try await eventually { organisation.shown("alice")?.details.status == "Writing the report" })
        let phone = try await organisation.member("alice", resource: "phone")
        try await phone.available(show: "away", status: "On the road", priority: 0)
        #expect(try await eventually { organisation.presence(of: "alice").presence?.availableResources.count == 2 })
        try await desk.available(show: "dnd", status: "Focus time", priority: 1)
        #expect(try await eventually { organisation.shown("alice")?.details.show == .dnd })

        desk.logOff()
        #expect(try await eventually { organisation.shown("alice")?.resource == "phone" })
        #expect(organisation.state(of: "alice") == .available)
        phone.logOff()
        #expect(try await eventually { organisation.state(of: "alice") == .offline })
    }

    @Test(arguments: XMPPServerKind.allCases) func aRosterPushAddingAContactMakesTheirPresenceKnown(on server: XMPPServerKind) async throws {
        let organisation = try await Organisation(on: server, members: ["alice"], outsiders: ["erin"])
        defer { organisation.stop() }
        let erin = try await organisation.member("erin")
        try await erin.available(show: "xa", status: "On leave")
        organisation.startWatching()
        #expect(try await organisation.snapshotComplete())
        #expect(organisation.state(of: "erin") == .unknown)

        // The watcher account (from a second session) asks to see erin, and erin approves: the server pushes the
        // new roster item to every session of the watcher, the source among them.
        let admin = try await MemberClient(
            "watcher", password: Organisation.password, resource: "admin", server: organisation.endpoint)
        var subscribe = XMPPWriter()
        subscribe.presence(type: "subscribe", to: "erin@\(organisation.server.domain)")
        try await admin.send(subscribe.bytes)
        try await Task.sleep(for: .milliseconds(200))
        var approve = XMPPWriter()
        approve.presence(type: "subscribed", to: "watcher@\(organisation.server.domain)")
        try await erin.send(approve.bytes)

        #expect(try await eventually { organisation.shown("erin")?.details.status == "On leave" })
        #expect(organisation.source.status.rosterSize == 2)
        _ = admin
    }

    @Test(arguments: XMPPServerKind.allCases) func aServerRestartReconnectsAndReconcilesWhatChangedDuringTheOutage(on server: XMPPServerKind) async throws {
        let organisation = try await Organisation(on: server, members: ["alice", "bob"])
        defer { organisation.stop() }
        let alice = try await organisation.member("alice")
        try await alice.available(status: "Before")
        let alicePhone = try await organisation.member("alice", resource: "phone")
        try await alicePhone.available(status: "Before, on the phone", priority: 5)
        let bob = try await organisation.member("bob")
        try await bob.available(status: "Here")
        organisation.startWatching()
        #expect(try await organisation.snapshotComplete())
        #expect(organisation.state(of: "bob") == .available)
        #expect(organisation.presence(of: "alice").presence?.availableResources.count == 2)

        await organisation.server.kill()
        #expect(try await eventually { !organisation.source.status.connected })
        #expect(organisation.state(of: "bob") == .available, "while down, statuses stay as of the drop")
        #expect(organisation.source.isLive == false)
        try await organisation.server.restart()
        // Only alice's desk comes back, with a new status; her phone and bob stayed away during the outage.
        let aliceAgain = try await organisation.member("alice")
        try await aliceAgain.available(show: "away", status: "After")

        #expect(try await eventually(timeout: TestDeadline.serverCycle) { organisation.source.isLive })
        #expect(try await eventually { organisation.shown("alice")?.details.status == "After" })
        #expect(organisation.state(of: "bob") == .offline, "nothing stays stuck available after a reconnect")
        #expect(
            organisation.presence(of: "alice").presence?.availableResources.map(\.resource) == ["desk"],
            "a resource the new snapshot does not report is gone")
        #expect(organisation.shown("alice")?.details.status == "After")
        #expect(organisation.source.status.reconnects == 1)
        _ = (alice, alicePhone, bob, aliceAgain)
    }

    @Test(arguments: XMPPServerKind.allCases) func prosodyKilledWhileMembersChangeComesBackWithEveryoneAtTheirLastWordAndNobodyStuckAvailable(on server: XMPPServerKind)
        async throws
    {
        let names = (1 ... 8).map { "member\($0)" }
        let organisation = try await Organisation(on: server, members: names)
        defer { organisation.stop() }
        var before: [(String, MemberClient)] = []
        for name in names {
            let member = try await organisation.member(name)
            try await member.available(status: "\(name) arrives")
            before.append((name, member))
        }
        organisation.startWatching()
        #expect(try await organisation.snapshotComplete())

        // Every member keeps changing; the server dies in the middle of it.
        let sessions = before
        let changing = Task {
            var round = 0
            while !Task.isCancelled {
                round += 1
                for (name, member) in sessions { try? await member.available(show: "away", status: "\(name) \(round)") }
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
        #expect(try await eventually { organisation.shown("member8")?.details.show == .away }, "changes are flowing")
        await organisation.server.kill()
        changing.cancel()
        await changing.value
        #expect(try await eventually { !organisation.source.status.connected })

        // The server comes back. Half the members log in again and keep changing while the watcher reconnects and
        // takes its new snapshot; the other half never come back.
        try await organisation.server.restart()
        let returning = Array(names.prefix(4))
        // (Each keeps its session open to the end: a member client logs off when released.)
        let back = try await withThrowingTaskGroup(of: (String, String, MemberClient).self) { group in
            for name in returning {
                group.addTask {
                    let member = try await organisation.member(name, resource: "laptop")
                    var last = ""
                    for round in 1 ... 30 {
                        last = "\(name) back \(round)"
                        try await member.available(show: round % 2 == 0 ? "dnd" : nil, status: last)
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    return (name, last, member)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let lastWords = Dictionary(uniqueKeysWithValues: back.map { ($0.0, $0.1) })

        #expect(try await eventually(timeout: TestDeadline.serverCycle) { organisation.source.isLive })
        for name in returning {
            #expect(try await eventually { organisation.shown(name)?.details.status == lastWords[name] })
            #expect(organisation.shown(name)?.details.show == .dnd)
            #expect(
                organisation.presence(of: name).presence?.availableResources.map(\.resource) == ["laptop"],
                "the resource from before the crash is gone")
        }
        for name in names.dropFirst(4) {
            #expect(organisation.state(of: name) == .offline, "\(name) did not come back: offline, not stuck available")
        }
        #expect(organisation.source.status.reconnects == 1)
        _ = (before, back)
    }

    @Test func aRosterFarLargerThanAFeedStanzaIsReadAndEveryoneInItIsKnown() async throws {
        // 3,000 items: about 190 KB and 3,000 elements in one roster result, over the feed port's 1,024 elements.
        // (Prosody only: its groups file takes 3,000 people without accounts in one write.)
        let server = XMPPServerKind.prosody
        let people = (0 ..< 3000).map { String(format: "person%04d", $0) }
        let organisation = try await Organisation(on: server, members: ["alice"], rosterOnly: people)
        defer { organisation.stop() }
        let alice = try await organisation.member("alice")
        try await alice.available(status: "Here")
        organisation.startWatching()
        #expect(try await eventually(timeout: TestDeadline.condition) { organisation.source.status.snapshotComplete })
        #expect(organisation.source.status.rosterSize == 3001)
        #expect(organisation.state(of: "alice") == .available)
        #expect(people.allSatisfy { organisation.state(of: $0) == .offline })
        _ = alice
    }

    @Test func aGroupSharedWithTheWatcherOnlyIsNamedAsTheCauseAndNobodyIsShownOffline() async throws {
        // ejabberd's shared roster groups are one-way: the people's group displayed to the watchers' group gives
        // the watcher a full roster, but the people do not have the watcher as a contact, so the server sends no
        // presence of theirs and refuses last activity (subscription-required).
        let server = try await onAThreadOfItsOwn {
            try EjabberdServer(
                accounts: ["watcher": Organisation.password, "alice": Organisation.password, "bob": Organisation.password])
        }
        defer { server.stop() }
        let host = server.domain
        try server.api("srg_create", ["group": "people", "host": host, "label": "People", "description": "", "display": ""])
        try server.api(
            "srg_create", ["group": "watchers", "host": host, "label": "Watchers", "description": "", "display": "people"])
        for person in ["alice", "bob"] {
            try server.api("srg_user_add", ["user": person, "host": host, "group": "people", "grouphost": host])
        }
        try server.api("srg_user_add", ["user": "watcher", "host": host, "group": "watchers", "grouphost": host])
        let organisation = try Organisation(server: server, answering: .init(reaskInterval: .seconds(1)))
        defer { organisation.stop() }
        let alice = try await organisation.member("alice")
        try await alice.available(status: "Here all along")

        organisation.startWatching()
        // Asked again every second; the cause is known once the server has refused last activity.
        #expect(
            try await eventually(timeout: TestDeadline.condition) {
                organisation.source.status.warning?.contains("displayed both ways") == true
            })
        let status = organisation.source.status
        #expect(status.connected && status.rosterSize == 2)
        #expect(!status.snapshotComplete && !organisation.source.isLive, "not live while nobody is known")
        #expect(status.snapshotUnconfirmed == 2)
        #expect(organisation.state(of: "alice") == .unknown, "never offline: the server said nothing about her")
        #expect(organisation.state(of: "bob") == .unknown)

        // Displayed both ways, the server shares their presence: the snapshot completes, exact.
        try server.api(
            "srg_create", ["group": "people", "host": host, "label": "People", "description": "", "display": "watchers"])
        let again = try await organisation.member("alice", resource: "phone")
        try await again.available(status: "Now visible")
        #expect(try await eventually(timeout: TestDeadline.condition) { organisation.source.isLive })
        #expect(organisation.state(of: "alice") == .available)
        #expect(organisation.state(of: "bob") == .offline)
        _ = (alice, again)
    }

    @Test(arguments: XMPPServerKind.allCases)
    func aWatcherWithAnEmptyRosterIsLiveAtOnce(on server: XMPPServerKind) async throws {
        let organisation = try await Organisation(on: server, members: [])
        defer { organisation.stop() }
        organisation.startWatching()
        #expect(try await organisation.snapshotComplete())
        #expect(organisation.source.isLive && organisation.source.status.rosterSize == 0)
    }

    @Test(arguments: XMPPServerKind.allCases) func aWrongPasswordIsAClearErrorAndNotARetryStorm(on server: XMPPServerKind) async throws {
        let organisation = try await Organisation(on: server, members: ["alice"], watcherPassword: "wrong")
        defer { organisation.stop() }
        organisation.startWatching()
        #expect(try await eventually { organisation.source.status.lastError != nil })
        try await Task.sleep(for: .seconds(1))
        let status = organisation.source.status
        #expect(status.lastError?.contains("not-authorized") == true)
        #expect(status.connectAttempts == 1, "a refused password waits the longest delay before trying again")
        #expect(!status.connected)
    }

    @Test(arguments: XMPPServerKind.allCases) func anIndependentClientsPresenceIsSeen(on server: XMPPServerKind) async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"),
            (try? Tool.run("/usr/bin/python3", ["-c", "import slixmpp"])) == 0
        else {
            Issue.record("python3-slixmpp is not installed (apt-get install python3-slixmpp; .ci/run does)")
            return
        }
        let organisation = try await Organisation(on: server, members: ["frank"])
        defer { organisation.stop() }
        organisation.startWatching()
        #expect(try await organisation.snapshotComplete())
        let script = Bundle.module.url(forResource: "slixmpp_member", withExtension: "py")!
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            script.path, "frank@\(organisation.server.domain)", "127.0.0.1", String(organisation.server.port),
        ]
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.environment = ["MEMBER_PASSWORD": Organisation.password]
        try process.run()
        defer {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()  // or Foundation keeps the Process
        }
        #expect(try await eventually(timeout: TestDeadline.condition) { organisation.shown("frank")?.details.show == .away })
        #expect(organisation.shown("frank")?.details.status == "Lunch (slixmpp)")
        #expect(organisation.shown("frank")?.resource == "slixmpp")
        try input.fileHandleForWriting.close()
        #expect(try await eventually(timeout: TestDeadline.condition) { organisation.state(of: "frank") == .offline })
    }
}
