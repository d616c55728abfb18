import Foundation
import PresenceTestSupport
import Testing

/// `presence serve` with its default flags against XMPP servers running the client rate limits their Debian
/// packages ship (read from the installed configuration files): what a deployment meets before it has read
/// any guide. The service names the limit and still converges at the rate it allows; with the Deploying guide's
/// exemption for the watcher, the limit is gone; and a SIGTERM ends the service whatever the server does with the
/// questions it was sent, also while the server never reads again. How long naming and stopping take is measured
/// against the guides' promises (``PromiseLog``), never asserted here.
///
/// Each test holds a server with an organisation's accounts and a service process for tens of seconds: a slot of
/// ``ServerSlots`` each, like every test that starts a real program.
extension XMPPServerFailureTests {
@Suite("presence serve on servers with the shipped rate limits", .realServers)
struct ServerRateLimitTests {
    /// Members on the roster, none online: every one of them is a last-activity question on ejabberd, which
    /// answers a probe of a member without a session with nothing.
    static let members = 600

    static func accounts(_ count: Int) -> [String: String] {
        var accounts = ["watcher": ServeReplicaTests.password]
        for index in 0 ..< count { accounts[String(format: "m%04d", index)] = "m" }
        return accounts
    }

    /// An ejabberd with `members` accounts set up as the Deploying guide says: a group of the people and a group of
    /// the watcher, each displayed to the other, every member named in the first.
    static func ejabberd(_ profile: ServerProfile, members: Int = members) async throws -> EjabberdServer {
        try await onAThreadOfItsOwn {
            let server = try EjabberdServer(accounts: accounts(members), profile: profile)
            let domain = server.domain
            for (group, display) in [("people", "watchers"), ("watchers", "people")] {
                try server.api(
                    "srg_create",
                    ["group": group, "host": domain, "label": group, "description": "", "display": display])
            }
            try server.api("srg_user_add", ["user": "watcher", "host": domain, "group": "watchers", "grouphost": domain])
            for member in accounts(members).keys where member != "watcher" {
                try server.api("srg_user_add", ["user": member, "host": domain, "group": "people", "grouphost": domain])
            }
            return server
        }
    }

    /// SIGTERM, and how long the service took to exit and with what status: -1 when it was still running after
    /// ``TestDeadline/shutdown``, as a stop that waited for the server to read its backlog would be.
    static func terminate(_ replica: RunningServer) async -> (status: Int32, took: Duration) {
        let started = ContinuousClock.now
        let status = await replica.stopped(within: TestDeadline.shutdown)
        return (status, ContinuousClock.now - started)
    }

    @Test func onStockEjabberdTheShaperIsNamedTheSnapshotConvergesAndSIGTERMDoesNotWaitForIt()
        async throws
    {
        // Twice the members: the shaper holds questions back for about twenty seconds rather than five, so that a
        // test polling on a loaded machine sees the limit while it holds.
        let server = try await Self.ejabberd(.stock, members: 2 * Self.members)
        defer { server.stop() }
        let started = ContinuousClock.now
        let replica = try await RunningServer.started(try ServeReplicaTests.replicaArguments(server, resource: "stock"))
        defer { _ = replica.stop() }

        // Named in /v1/stats, in /readyz's reason and in the log.
        #expect(
            try await eventually(timeout: TestDeadline.condition) {
                try await ServeReplicaTests.source(port: replica.httpPort)?["readLimit"] is [String: Any]
            }, "the service's log: \(replica.log.suffix(6000))")
        PromiseLog.record(
            "stock ejabberd's shaper is named", promise: PromiseLog.Promise.shaperNamed, measured: ContinuousClock.now - started)
        // The shipped `normal` shaper, 3,000 bytes a second, named (at once, or once a slow watcher has let the
        // shaper's burst run out).
        func limit() async throws -> [String: Any]? {
            try await ServeReplicaTests.source(port: replica.httpPort)?["readLimit"] as? [String: Any]
        }
        let named = try await eventually(timeout: TestDeadline.condition) {
            (try await limit()?["likelySetting"] as? String)?.contains("c2s_shaper") == true
        }
        let limitNow = (try? await limit()) ?? [:]
        #expect(named, "\(limitNow)")
        let source = try #require(try await ServeReplicaTests.source(port: replica.httpPort))
        #expect(((source["readLimit"] as? [String: Any])?["explanation"] as? String)?.contains("Deploying guide") == true)
        #expect(source["questionsInFlight"] as? Int ?? 0 <= 256)
        let ready = try await ServeReplicaTests.get("/readyz", port: replica.httpPort)
        #expect(ready.status == 503)
        let reason = try #require(ready.json?["reason"] as? String)
        #expect(reason.contains("c2s_shaper"), "\(reason)")
        #expect(try await eventually { replica.log.contains("c2s_shaper rule") }, "the log names it")

        // About a second of questions in flight (the shaper reads about 37 a second), and still converging at the
        // rate it allows.
        let inFlight = { try await ServeReplicaTests.source(port: replica.httpPort)?["questionsInFlight"] as? Int ?? 0 }
        let settled = try await eventually(timeout: TestDeadline.condition) { try await inFlight() <= 120 }
        let inFlightNow = (try? await inFlight()) ?? -1
        #expect(settled, "in flight: \(inFlightNow)")
        let waiting = { try await ServeReplicaTests.source(port: replica.httpPort)?["questionsWaiting"] as? Int ?? 0 }
        let before = try await waiting()
        // Fewer waiting, or none left: on a busy machine the last of them may go out before `before` is read.
        #expect(
            try await eventually(timeout: TestDeadline.condition) {
                let now = try await waiting()
                return now == 0 || now < before
            }, "questions keep going: \(before) waiting")
        let after = try await waiting()

        // Stopping does not wait for the questions the shaper holds back.
        let (status, took) = await Self.terminate(replica)
        PromiseLog.record(
            "SIGTERM on a shaped ejabberd (\(after) questions waiting)", promise: PromiseLog.Promise.stopped, measured: took)
        #expect(status == 0, "the service ended by itself, without waiting for the questions held back")
    }

    @Test func withTheGuidesExemptionTheWatcherMeetsNoLimitOnStockEjabberd() async throws {
        let server = try await Self.ejabberd(.stockExempting(watcher: "watcher"))
        defer { server.stop() }
        let replica = try await RunningServer.started(try ServeReplicaTests.replicaArguments(server, resource: "exempt"))
        defer { _ = replica.stop() }
        #expect(
            try await eventually(timeout: TestDeadline.condition) {
                try await ServeReplicaTests.get("/readyz", port: replica.httpPort).status == 200
            })
        let source = try #require(try await ServeReplicaTests.source(port: replica.httpPort))
        #expect(source["rosterSize"] as? Int == Self.members)
        let snapshot = try #require(source["lastSnapshotMilliseconds"] as? Double)
        print("stock ejabberd with the exemption: \(Self.members) members, snapshot \(snapshot) ms")
        // The shaper could not have let the questions through this fast: one per member, about 75 bytes each,
        // past its 20,000-byte burst at 3,000 bytes a second. (Whether the service names a limit is no test here:
        // an ejabberd starved of CPU by a loaded machine answers at a shaper's rate too, and is reported so.)
        let shaped = Double(Self.members * 75 - 20_000) / 3_000 * 1_000
        #expect(snapshot < shaped * 0.8, "\(snapshot) ms; shaped, at least \(shaped) ms")
        #expect(await replica.stopped() == 0)
    }

    @Test(arguments: XMPPServerKind.allCases)
    func aServerThatStopsReadingAfterABurstOfQuestionsDoesNotHoldUpSIGTERM(on kind: XMPPServerKind) async throws {
        // ejabberd with an organisation's roster: the snapshot's questions are in flight when it freezes.
        let server: any XMPPTestServer =
            kind == .ejabberd
            ? try await Self.ejabberd(.stock)
            : try await kind.start(
                accounts: ["watcher": ServeReplicaTests.password, "bob": "b"], groups: ["Staff": ["watcher", "bob"]],
                profile: .stock)
        defer { server.stop() }
        let replica = try await RunningServer.started(try ServeReplicaTests.replicaArguments(server, resource: "burst"))
        defer { _ = replica.stop() }
        #expect(
            try await eventually(timeout: TestDeadline.condition) {
                try await ServeReplicaTests.source(port: replica.httpPort)?["connected"] as? Bool == true
            })
        // Frozen with the snapshot's questions unanswered: bytes it will never read, a close it never answers.
        server.pause()
        defer { server.resume() }
        try await Task.sleep(for: .seconds(1))
        // The server stays frozen until the service has ended: a stop that waited for it would never end.
        let (status, took) = await Self.terminate(replica)
        PromiseLog.record("SIGTERM with a frozen \(kind) holding questions", promise: PromiseLog.Promise.stopped, measured: took)
        #expect(status == 0, "the service ended by itself while the server was frozen")
    }
}
}
