import Foundation
import LoopbackHTTP
import PresenceStore
import PresenceTestSupport
import Testing

/// An XMPP server that stops without closing anything (SIGSTOP: what a stuck process or a silent partition looks
/// like), watched by `presence serve` with its default flags: the keep-alive notices, and every open change
/// stream hears at once that what it shows is no longer live.
@Suite("presence serve with a frozen XMPP server", .serialized)
struct FrozenServerTests {
    /// The promise: a hang is noticed within 30 s of the server's last byte.
    static let noticedWithin: Duration = .seconds(30)

    @Test(arguments: XMPPServerKind.allCases)
    func aFrozenServerIsNoticedWithinThirtySecondsAndOpenStreamsHearTheyAreNotLive(on kind: XMPPServerKind)
        async throws
    {
        let server = try await kind.start(
            accounts: ["watcher": ServeReplicaTests.password, "bob": "b"], groups: ["Staff": ["watcher", "bob"]])
        defer { server.stop() }
        let bob = try await MemberClient("bob", password: "b", resource: "desk", server: server.endpoint)
        try await bob.available(status: "In the office")
        let replica = try RunningServer(try ServeReplicaTests.replicaArguments(server, resource: "frozen"))
        defer { _ = replica.stop() }
        #expect(try await eventually { try ServeReplicaTests.get("/readyz", port: replica.httpPort).status == 200 })

        let stream = try AnswerStream(port: replica.httpPort, jids: ["bob@example.test"], lasting: 90)
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
        #expect(noticedAfter <= Self.noticedWithin, "noticed after \(noticedAfter)")
        print("a frozen \(kind) was noticed \(noticedAfter) after it froze")
        #expect(try await eventually { replica.log.contains("the connection is dead") }, "the log says why")

        // Back: the watcher logs in again and the stream is live again.
        server.resume()
        resumed.withLock { $0 = true }
        #expect(try await stream.next { $0["live"] as? Bool == true } != nil, "live again")
        let source = try #require(try ServeReplicaTests.source(port: replica.httpPort))
        #expect(source["keepAlivePings"] as? Int ?? 0 >= 1, "the hang was found by a ping left unanswered")
        _ = bob
    }
}
