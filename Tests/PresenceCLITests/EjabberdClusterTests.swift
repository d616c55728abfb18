import Foundation
import LoopbackHTTP
import PresenceStore
import PresenceTestSupport
import Testing

/// `presence serve` watching a real two-node ejabberd cluster, one of whose nodes crashes: its members' sessions
/// vanish from the cluster with no unavailable presence to anyone, and only the resync can tell.
@Suite("presence serve on a two-node ejabberd cluster")
struct EjabberdClusterTests {
    @Test func whenANodeCrashesEveryMemberIsExactAgainWithinTheResyncBound() async throws {
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
        let replica = try RunningServer(
            try ServeReplicaTests.replicaArguments(cluster.first, resource: "cluster") + [
                "--resync-interval", String(interval),
            ])
        defer { _ = replica.stop() }
        func answer(_ user: String) throws -> [String: Any]? {
            try ServeReplicaTests.answer("\(user)@example.test", port: replica.httpPort)
        }
        func state(_ user: String) throws -> String? { try answer(user)?["state"] as? String }
        #expect(try await eventually { try ServeReplicaTests.get("/readyz", port: replica.httpPort).status == 200 })
        for user in ["alice", "bob", "carol", "dave"] {
            #expect(try await eventually { try state(user) == "available" }, "\(user) before the crash")
        }
        #expect(try state("erin") == "offline")
        #expect(try answer("carol")?["status"] as? String == "On the phone", "the phone has the higher priority")

        await cluster.second.crash()
        let crashed = ContinuousClock.now
        // The longest a forgotten status may live here: the resync's bound with margin for a loaded machine.
        let bound: Duration = .seconds(interval) + .seconds(10)
        #expect(
            try await eventually(timeout: bound) {
                try state("alice") == "offline" && state("bob") == "offline"
                    && answer("carol")?["status"] as? String == "At her desk"
            }, "node b's sessions are gone from the answers")
        let took = ContinuousClock.now - crashed
        #expect(try state("dave") == "available" && state("erin") == "offline", "node a's members are untouched")
        let carol = try #require(try answer("carol"))
        #expect(carol["resource"] as? String == "desk" && carol["live"] as? Bool == true, "\(carol)")
        let source = try #require(try ServeReplicaTests.source(port: replica.httpPort))
        #expect(source["resyncCorrected"] as? Int ?? 0 >= 3, "alice, bob and carol's phone: \(source)")
        #expect(replica.log.contains("resync corrected a status the server no longer holds"))
        print("a crashed node's statuses were corrected \(took) after the crash")
        _ = sessions
    }
}
