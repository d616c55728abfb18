import Foundation
import PresenceStore
import PresenceTestSupport
import Testing

/// Several `presence serve` on one watcher account against a real Prosody and a real ejabberd: readiness, the
/// resource conflict, and the resync that corrects what the server no longer holds.
@Suite("presence serve as one of several replicas", .realServers)
struct ServeReplicaTests {
    static let password = "replicated ✓"

    static func passwordFile(in directory: URL) throws -> String {
        let file = directory.appendingPathComponent("watcher-\(UUID().uuidString).password")
        try (password + "\n").write(to: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        return file.path
    }

    static func replicaArguments(_ server: any XMPPTestServer, resource: String) throws -> [String] {
        [
            "--xmpp-jid", "watcher@\(server.domain)", "--xmpp-password-file", try passwordFile(in: server.directory),
            "--xmpp-host", "127.0.0.1", "--xmpp-port", String(server.port), "--xmpp-resource", resource,
            "--xmpp-reconnect-max", "1",
        ]
    }

    /// A replica whose XMPP server is not there: it never logs in, so it is never ready.
    static func replicaArgumentsToNowhere(in directory: URL) throws -> [String] {
        [
            "--xmpp-jid", "watcher@example.test", "--xmpp-password-file", try passwordFile(in: directory),
            "--xmpp-host", "127.0.0.1", "--xmpp-port", String(freeLoopbackPort()), "--xmpp-reconnect-max", "1",
        ]
    }

    static func get(_ path: String, port: Int, headers: [String: String] = [:]) async throws -> (status: Int, json: [String: Any]?) {
        let response = try await TestHTTP.get(port: port, path: path, headers: headers)
        return (response.status, (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any])
    }

    static func answer(_ jid: String, port: Int) async throws -> [String: Any]? {
        (try await get("/v1/presence/\(jid)", port: port).json?["results"] as? [[String: Any]])?.first
    }

    static func source(port: Int) async throws -> [String: Any]? {
        try await get("/v1/stats", port: port).json?["source"] as? [String: Any]
    }

    @Test func aReplicaIsReadyOnlyOnceItsPictureIsLiveAndRefusesQueriesUntilThenWhenToldTo() async throws {
        // A server that is not there: the replica never logs in.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("presence-ready-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let arguments = try Self.replicaArgumentsToNowhere(in: directory)
        let refusing = try RunningServer(arguments + ["--when-not-ready", "refuse"])
        defer { _ = refusing.stop() }
        let ready = try await Self.get("/readyz", port: refusing.httpPort)
        #expect(ready.status == 503)
        #expect(ready.json?["ready"] as? Bool == false)
        #expect((ready.json?["reason"] as? String)?.contains("not logged in to the XMPP server") == true)
        // The source's first attempt fails beside the ports' opening: its error is the detail once it has.
        #expect(
            try await eventually {
                (try await Self.get("/readyz", port: refusing.httpPort).json?["reason"] as? String)?
                    .contains("cannot connect to 127.0.0.1") == true
            }, "the detail, with the API open")
        #expect((ready.json?["instance"] as? String)?.count == 16)
        let refused = try await Self.get("/v1/presence/alice@example.test", port: refusing.httpPort)
        #expect(refused.status == 503)
        #expect((refused.json?["error"] as? [String: Any])?["condition"] as? String == "not-ready")
        let batch = try await Self.get("/v1/presence?jid=alice@example.test", port: refusing.httpPort)
        #expect(batch.status == 503)
        let events = try await Self.get("/v1/presence/events?jid=alice@example.test", port: refusing.httpPort)
        #expect(events.status == 503, "a change stream goes to a ready replica")
        // `presence watch` waits for the replica to become ready instead of giving up on it.
        let watch = try await CLI.run(
            ["watch", "--server", "http://127.0.0.1:\(refusing.httpPort)", "--reconnect-delay", "0.2", "alice@example.test"],
            // Still waiting when it is stopped, after time for a dozen 0.2 s retries (scaled like every deadline).
            timeout: TestDeadline.scaled(.seconds(4)))
        #expect(watch.timedOut, "watch was still waiting: \(watch.stderr)")
        #expect(
            watch.stderr.components(separatedBy: "unavailable (503)").count > 2,
            "watch asked again after each short delay: \(watch.stderr)")
        // The balancer's last resort, when no replica is ready: an answer that says it is not live.
        let stale = try await Self.get(
            "/v1/presence/alice@example.test", port: refusing.httpPort, headers: ["X-Presence-Accept-Stale": "1"])
        #expect(stale.status == 200)
        #expect(try await Self.get("/healthz", port: refusing.httpPort).status == 200, "alive, though not ready")
        #expect(try await Self.get("/v1/stats", port: refusing.httpPort).status == 200)
        let metrics = try await TestHTTP.get(port: refusing.httpPort, path: "/metrics")
        #expect(String(decoding: metrics.body, as: UTF8.self).contains("presence_ready 0"))

        // By default a replica that is not ready still answers, as a single instance should.
        let answering = try RunningServer(arguments)
        defer { _ = answering.stop() }
        #expect(try await Self.get("/readyz", port: answering.httpPort).status == 503)
        let answered = try await Self.answer("alice@example.test", port: answering.httpPort)
        #expect(answered?["live"] as? Bool == false)

        // With tokens, /readyz is still open to the balancer, but says nothing of where the XMPP server is.
        let tokens = directory.appendingPathComponent("tokens")
        try "readiness-test-token-0123456789\n".write(to: tokens, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: tokens.path)
        let guarded = try RunningServer(arguments + ["--api-token-file", tokens.path])
        defer { _ = guarded.stop() }
        #expect(try await eventually { guarded.log.contains("cannot connect to 127.0.0.1") }, "the detail is in the log")
        let guardedReady = try await Self.get("/readyz", port: guarded.httpPort)
        #expect(guardedReady.status == 503)
        let reason = try #require(guardedReady.json?["reason"] as? String)
        #expect(reason.contains("not logged in to the XMPP server"))
        #expect(!reason.contains("127.0.0.1") && !reason.contains("cannot connect"), "\(reason)")

        // Without an XMPP source there is nothing to be behind: ready from the start.
        let feedOnly = try RunningServer()
        defer { _ = feedOnly.stop() }
        #expect(try await Self.get("/readyz", port: feedOnly.httpPort).status == 200)
    }

    @Test(arguments: XMPPServerKind.allCases)
    func twoReplicasOnOneResourceSayWhichOneLostAndNeverReplaceEachOtherInALoop(on kind: XMPPServerKind) async throws {
        let server = try await kind.start(
            accounts: ["watcher": Self.password, "alice": "a"], groups: ["Staff": ["watcher", "alice"]])
        defer { server.stop() }
        let first = try RunningServer(try Self.replicaArguments(server, resource: "replica"))
        defer { _ = first.stop() }
        #expect(try await eventually { try await Self.get("/readyz", port: first.httpPort).status == 200 })

        let second = try RunningServer(try Self.replicaArguments(server, resource: "replica"))
        defer { _ = second.stop() }
        #expect(try await eventually { try await Self.source(port: first.httpPort)?["replaced"] as? Bool == true })
        #expect(try await eventually { try await Self.get("/readyz", port: second.httpPort).status == 200 })
        let readiness = try await Self.get("/readyz", port: first.httpPort)
        #expect(readiness.status == 503)
        #expect((readiness.json?["reason"] as? String)?.contains("--xmpp-resource") == true)
        #expect(await first.logs("replaced this session; not reconnecting"))

        // Long enough for several reconnection attempts at the 1-second maximum: there are none.
        try await Task.sleep(for: .seconds(3))
        let firstSource = try #require(try await Self.source(port: first.httpPort))
        let secondSource = try #require(try await Self.source(port: second.httpPort))
        #expect(firstSource["connectAttempts"] as? Int == 1)
        #expect(firstSource["connected"] as? Bool == false)
        #expect(secondSource["connectAttempts"] as? Int == 1)
        #expect(secondSource["reconnects"] as? Int == 0)
        #expect(secondSource["connected"] as? Bool == true)
    }

    @Test(arguments: XMPPServerKind.allCases)
    func aChangeStreamHearsWhenTheSnapshotConfirmsARestoredStatusThatDidNotChange(on kind: XMPPServerKind)
        async throws
    {
        let server = try await kind.start(
            accounts: ["watcher": Self.password, "bob": "b"], groups: ["Staff": ["watcher", "bob"]])
        defer { server.stop() }
        let dataDirectory = server.directory.appendingPathComponent("replica-data-\(UUID())").path
        let arguments = try Self.replicaArguments(server, resource: "restarting") + ["--data-dir", dataDirectory]
        let bob = try await MemberClient("bob", password: "b", resource: "desk", server: server.endpoint)
        try await bob.available(status: "In the office")
        do {
            let first = try RunningServer(arguments)
            #expect(
                try await eventually {
                    try await Self.answer("bob@example.test", port: first.httpPort)?["status"] as? String == "In the office"
                })
            #expect(first.stop() == 0, "SIGTERM flushes the disk tier")
        }

        // Restarted while the server cannot answer: bob's status is as of the last write, and a stream says so.
        server.pause()
        let paused = Locked(true)
        defer { if paused.withLock({ $0 }) { server.resume() } }
        let second = try RunningServer(arguments)
        defer { _ = second.stop() }
        // A stream that never hears again ends within a minute instead of waiting for ever between heartbeats.
        let stream = try await AnswerStream(port: second.httpPort, jids: ["bob@example.test"])
        let restored = try #require(try await stream.next())
        #expect(restored["status"] as? String == "In the office")
        #expect(restored["asOf"] is String && restored["live"] as? Bool == false, "\(restored)")

        // The snapshot finds bob as he was: his status does not change, but his answer does.
        server.resume()
        paused.withLock { $0 = false }
        let confirmed = try #require(try await stream.next(), "the stream hears that the status is current")
        #expect(confirmed["status"] as? String == "In the office")
        #expect(confirmed["asOf"] is NSNull, "\(confirmed)")
        // And once the snapshot is complete the source is live, which the stream hears too.
        let latest =
            confirmed["live"] as? Bool == true ? confirmed : try #require(try await stream.next { $0["live"] as? Bool == true })
        #expect(latest["status"] as? String == "In the office", "\(latest)")
        _ = bob
    }

    @Test(arguments: XMPPServerKind.allCases)
    func aResyncCorrectsAStatusTheServerNoLongerHolds(on kind: XMPPServerKind) async throws {
        let server = try await kind.start(
            accounts: ["watcher": Self.password, "alice": "a", "bob": "b"],
            groups: ["Staff": ["watcher", "alice", "bob"]])
        defer { server.stop() }
        let alice = try await MemberClient("alice", password: "a", resource: "laptop", server: server.endpoint)
        try await alice.available(status: "Here")
        let replica = try RunningServer(
            try Self.replicaArguments(server, resource: "resync") + [
                "--resync-interval", "2", "--resync-rate", "50", "--resync-members", "all",
            ])
        defer { _ = replica.stop() }
        #expect(try await eventually { try await Self.get("/readyz", port: replica.httpPort).status == 200 })
        #expect(try await Self.answer("bob@example.test", port: replica.httpPort)?["state"] as? String == "offline")

        // A status the server does not hold: bob available from a session that, for the server, never existed,
        // fed through the feed port (the watcher never heard it: only a resync of every member asks about bob).
        try ServeCommandTests.send(
            "<presence from='bob@example.test/ghost'><status>Gone long ago</status></presence>",
            toPort: replica.feedPort)
        // Applied, then corrected by the next resync (every 2 s): one already done by the time this looks counts.
        #expect(
            try await eventually(timeout: TestDeadline.condition) {
                let status = try await Self.answer("bob@example.test", port: replica.httpPort)?["status"] as? String
                let corrected = try await Self.source(port: replica.httpPort)?["resyncCorrected"] as? Int ?? 0
                return status == "Gone long ago" || corrected >= 1
            })
        #expect(
            try await eventually(timeout: TestDeadline.condition) {
                try await Self.answer("bob@example.test", port: replica.httpPort)?["state"] as? String == "offline"
            })
        #expect(try await eventually { try await Self.source(port: replica.httpPort)?["resyncCorrected"] as? Int == 1 })
        #expect(try await eventually { try await Self.source(port: replica.httpPort)?["resyncs"] as? Int ?? 0 >= 1 })
        let source = try #require(try await Self.source(port: replica.httpPort))
        #expect(source["resyncProbed"] as? Int ?? 0 >= 2)
        #expect(source["lastResyncMilliseconds"] as? Double != nil)
        let still = try #require(try await Self.answer("alice@example.test", port: replica.httpPort))
        #expect(still["state"] as? String == "available" && still["status"] as? String == "Here")
        #expect(await replica.logs("resync corrected a status the server no longer holds"))
        _ = alice
    }
}
