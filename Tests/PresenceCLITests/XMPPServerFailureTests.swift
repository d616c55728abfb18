import Foundation
import PresenceStore
import PresenceTestSupport
import Testing

/// `presence serve` with its default flags when its XMPP server fails without a word: a server that stops
/// without closing anything (SIGSTOP: what a stuck process or a silent partition looks like), which the keep-alive
/// notices, every open change stream hearing at once that what it shows is no longer live; and a node of a
/// two-node ejabberd cluster that crashes, whose members' sessions vanish from the cluster with no unavailable
/// presence to anyone, which only the resync can tell.
///
/// Each test holds real servers (two Erlang VMs for the cluster) and a service process for tens of seconds: a slot
/// of ``ServerSlots`` each, like every test that starts a real program.
@Suite("presence serve when its XMPP server fails without a word", .realServers)
struct XMPPServerFailureTests {
    @Test(arguments: XMPPServerKind.allCases)
    func aFrozenServerIsNoticedAndOpenStreamsHearTheyAreNotLive(on kind: XMPPServerKind)
        async throws
    {
        let server = try await kind.start(
            accounts: ["watcher": ServeReplicaTests.password, "bob": "b"], groups: ["Staff": ["watcher", "bob"]])
        defer { server.stop() }
        let bob = try await MemberClient("bob", password: "b", resource: "desk", server: server.endpoint)
        try await bob.available(status: "In the office")
        let replica = try await RunningServer.started(try ServeReplicaTests.replicaArguments(server, resource: "frozen"))
        defer { _ = replica.stop() }
        #expect(try await eventually { try await ServeReplicaTests.get("/readyz", port: replica.httpPort).status == 200 })

        let stream = try await AnswerStream(port: replica.httpPort, jids: ["bob@example.test"], lasting: TestDeadline.serverCycle)
        let live = try #require(try await stream.next { $0["live"] as? Bool == true })
        #expect(live["status"] as? String == "In the office", "\(live)")

        server.pause()
        let frozen = ContinuousClock.now
        let resumed = Locked(false)
        defer { if !resumed.withLock({ $0 }) { server.resume() } }
        // The same status, no longer live: sent when the keep-alive gives the connection up. (Answers sent again
        // before the freeze, still live, may come first.)
        let notLive = try #require(
            try await stream.next { $0["live"] as? Bool == false }, "the stream hears that the answer is not live")
        let noticedAfter = ContinuousClock.now - frozen
        #expect(notLive["live"] as? Bool == false, "\(notLive)")
        #expect(notLive["status"] as? String == "In the office", "the status is kept, as of the hang: \(notLive)")
        PromiseLog.record(
            "a frozen \(kind) is noticed", promise: PromiseLog.Promise.frozenServerNoticed, measured: noticedAfter)
        #expect(try await eventually { replica.log.contains("the connection is dead") }, "the log says why")

        // Back: the watcher logs in again and the stream is live again.
        server.resume()
        resumed.withLock { $0 = true }
        #expect(try await stream.next { $0["live"] as? Bool == true } != nil, "live again")
        let source = try #require(try await ServeReplicaTests.source(port: replica.httpPort))
        #expect(source["keepAlivePings"] as? Int ?? 0 >= 1, "the hang was found by a ping left unanswered")
        #expect(await replica.stopped() == 0)
        _ = bob
    }

    @Test func whenANodeCrashesEveryMemberIsExactAgainAfterAResync() async throws {
        let people = ["alice", "bob", "carol", "dave", "erin"]
        let cluster = try await onAThreadOfItsOwn {
            try EjabberdCluster(
                accounts: Dictionary(uniqueKeysWithValues: people.map { ($0, "pw") }).merging(
                    ["watcher": ServeReplicaTests.password]) { $1 },
                groups: ["Staff": ["watcher"] + people])
        }
        defer { cluster.stop() }
        let a = cluster.first.endpoint
        let b = cluster.second.endpoint
        // alice and bob on node b only; carol on both (desk on a, phone on b); dave on node a; erin offline.
        var sessions: [MemberClient] = []
        for (user, resource, node, status) in [
            ("alice", "laptop", b, "Drafting"), ("bob", "desk", b, "In the lab"), ("carol", "desk", a, "At her desk"),
            ("carol", "phone", b, "On the phone"), ("dave", "desk", a, "Reviewing"),
        ] {
            let member = try await MemberClient(user, password: "pw", resource: resource, server: node)
            try await member.available(status: status, priority: resource == "phone" ? 5 : 1)
            sessions.append(member)
        }
        // A short interval for the test: the bound is the interval plus one pass over the members shown
        // available (four here) plus the server's answer.
        let interval = 1.0
        let replica = try await RunningServer.started(
            try ServeReplicaTests.replicaArguments(cluster.first, resource: "cluster") + [
                "--resync-interval", String(interval),
            ])
        defer { _ = replica.stop() }
        func answer(_ user: String) async throws -> [String: Any]? {
            try await ServeReplicaTests.answer("\(user)@example.test", port: replica.httpPort)
        }
        func state(_ user: String) async throws -> String? { try await answer(user)?["state"] as? String }
        #expect(try await eventually { try await ServeReplicaTests.get("/readyz", port: replica.httpPort).status == 200 })
        for user in ["alice", "bob", "carol", "dave"] {
            #expect(try await eventually { try await state(user) == "available" }, "\(user) before the crash")
        }
        #expect(try await state("erin") == "offline")
        #expect(try await answer("carol")?["status"] as? String == "On the phone", "the phone has the higher priority")

        await cluster.second.crash()
        let crashed = ContinuousClock.now
        #expect(
            try await eventually(timeout: TestDeadline.serverCycle) {
                let (alice, bob) = (try await state("alice"), try await state("bob"))
                let carol = try await answer("carol")?["status"] as? String
                return alice == "offline" && bob == "offline" && carol == "At her desk"
            }, "node b's sessions are gone from the answers")
        let took = ContinuousClock.now - crashed
        let (dave, erin) = (try await state("dave"), try await state("erin"))
        #expect(dave == "available" && erin == "offline", "node a's members are untouched")
        let carol = try #require(try await answer("carol"))
        #expect(carol["resource"] as? String == "desk" && carol["live"] as? Bool == true, "\(carol)")
        let source = try #require(try await ServeReplicaTests.source(port: replica.httpPort))
        #expect(source["resyncCorrected"] as? Int ?? 0 >= 3, "alice, bob and carol's phone: \(source)")
        #expect(await replica.logs("resync corrected a status the server no longer holds"))
        PromiseLog.record(
            "a crashed ejabberd node's statuses are corrected",
            promise: PromiseLog.Promise.resyncCorrected(interval: .seconds(interval)), measured: took)
        #expect(await replica.stopped() == 0)
        _ = sessions
    }
}
