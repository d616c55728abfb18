import Foundation
import PresenceTestSupport
import Testing

/// `presence serve --xmpp-jid` against a real Prosody and a real ejabberd: the operator's setup from the README, end
/// to end.
@Suite("presence serve watching a real XMPP server", .realServers)
struct ServeXMPPTests {
    static let password = "watch-them-all ✓"

    private func passwordFile(in directory: URL) throws -> String {
        let file = directory.appendingPathComponent("watcher.password")
        try (ServeXMPPTests.password + "\n").write(to: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        return file.path
    }

    private func query(_ jid: String, port: Int) async throws -> [String: Any]? {
        let result = try await CLI.run(["query", "--server", "http://127.0.0.1:\(port)", "--format", "json", jid])
        let document = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return (document?["results"] as? [[String: Any]])?.first
    }

    private func stats(port: Int) async throws -> [String: Any]? {
        let result = try await CLI.run(["stats", "--server", "http://127.0.0.1:\(port)", "--format", "json"])
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
    }

    @Test(arguments: XMPPServerKind.allCases) func theServiceShowsTheRostersLiveStatusesAndSaysWhenTheyAreNoLongerLive(on kind: XMPPServerKind) async throws {
        let server = try await kind.start(
            accounts: ["watcher": ServeXMPPTests.password, "alice": "a", "bob": "b", "zed": "z"],
            groups: ["Staff": ["watcher", "alice", "bob"]])
        defer { server.stop() }
        let alice = try await MemberClient("alice", password: "a", resource: "laptop", server: server.endpoint)
        try await alice.available(show: "dnd", status: "Reviewing <the> budget", priority: 2)
        let service = try RunningServer([
            "--xmpp-jid", "watcher@\(server.domain)", "--xmpp-password-file", try passwordFile(in: server.directory),
            "--xmpp-host", "127.0.0.1", "--xmpp-port", String(server.port), "--xmpp-reconnect-max", "1",
        ])
        defer { _ = service.stop() }

        #expect(
            try await eventually { try await query("alice@example.test", port: service.httpPort)?["live"] as? Bool == true })
        let answer = try #require(try await query("alice@example.test", port: service.httpPort))
        #expect(answer["state"] as? String == "available")
        #expect(answer["show"] as? String == "dnd")
        #expect(answer["status"] as? String == "Reviewing <the> budget")
        #expect(answer["resource"] as? String == "laptop")
        #expect(try await query("bob@example.test", port: service.httpPort)?["state"] as? String == "offline")
        #expect(try await query("zed@example.test", port: service.httpPort)?["state"] as? String == "unknown")

        let source = try #require(try await stats(port: service.httpPort)?["source"] as? [String: Any])
        #expect(source["kind"] as? String == "xmpp")
        #expect(source["jid"] as? String == "watcher@example.test")
        #expect(source["connected"] as? Bool == true)
        #expect(source["rosterSize"] as? Int == 2)
        let text = try await CLI.run(["stats", "--server", "http://127.0.0.1:\(service.httpPort)"])
        #expect(text.stdout.contains("xmpp watcher@example.test at 127.0.0.1:\(server.port)"))
        let metrics = try await TestHTTP.get(port: service.httpPort, path: "/metrics")
        #expect(String(decoding: metrics.body, as: UTF8.self).contains("presence_xmpp_live 1"))

        // The server goes away: answers stay as of the drop and say they are not live.
        await server.kill()
        #expect(
            try await eventually { try await query("alice@example.test", port: service.httpPort)?["live"] as? Bool == false })
        #expect(try await query("alice@example.test", port: service.httpPort)?["state"] as? String == "available")
        let down = try #require(try await stats(port: service.httpPort)?["source"] as? [String: Any])
        #expect(down["connected"] as? Bool == false)
        #expect(down["disconnectedSince"] as? String != nil)
        let queryText = try await CLI.run(["query", "--server", "http://127.0.0.1:\(service.httpPort)", "alice@example.test"])
        #expect(queryText.stdout.contains("not live"))

        #expect(!service.log.contains(ServeXMPPTests.password), "the password is never logged")
        #expect(service.stop() == 0)
        _ = alice
    }

    @Test(arguments: XMPPServerKind.allCases) func anLRUServiceRefillsLostMembersByProbeAndSaysWhereEachAnswerCameFrom(on kind: XMPPServerKind) async throws {
        let members = (1 ... 6).map { "m\($0)" }
        var accounts = Dictionary(uniqueKeysWithValues: members.map { ($0, "pw") })
        accounts["watcher"] = ServeXMPPTests.password
        let server = try await kind.start(accounts: accounts, groups: ["Staff": ["watcher"] + members])
        defer { server.stop() }
        var sessions: [MemberClient] = []
        for member in members {
            let session = try await MemberClient(member, password: "pw", resource: "desk", server: server.endpoint)
            try await session.available(status: "I am \(member)")
            sessions.append(session)
        }
        let service = try RunningServer([
            "--storage", "lru", "--count-limit", "2", "--probe-timeout", "5", "--probe-rate", "100",
            "--xmpp-jid", "watcher@\(server.domain)", "--xmpp-password-file", try passwordFile(in: server.directory),
            "--xmpp-host", "127.0.0.1", "--xmpp-port", String(server.port),
        ])
        defer { _ = service.stop() }
        let base = "http://127.0.0.1:\(service.httpPort)"
        #expect(
            try await eventually {
                (try await stats(port: service.httpPort)?["source"] as? [String: Any])?["live"] as? Bool == true
            })

        func ask(_ policy: String?) async throws -> [[String: Any]] {
            let result = try await CLI.run(
                ["query", "--server", base, "--format", "json"] + (policy.map { ["--policy", $0] } ?? [])
                    + members.map { "\($0)@\(server.domain)" })
            #expect(result.status == 0, "\(result.stderr)")
            let document = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            return document?["results"] as? [[String: Any]] ?? []
        }
        let cached = try await ask("cache-only")
        #expect(cached.count { $0["state"] as? String == "lost" } == 4, "the LRU holds 2 of 6")
        #expect(
            cached.allSatisfy { ($0["origin"] as? String) == ($0["state"] as? String == "lost" ? "none" : "storage") })
        let refilled = try await ask(nil)
        #expect(refilled.map { $0["status"] as? String } == members.map { "I am \($0)" }, "the default refills")
        #expect(refilled.count { $0["origin"] as? String == "probe" } >= 4)
        #expect(refilled.allSatisfy { $0["probeFailure"] is NSNull })

        let probes = try #require(try await stats(port: service.httpPort)?["probes"] as? [String: Any])
        #expect(probes["defaultPolicy"] as? String == "cache-else-probe")
        #expect((probes["sent"] as? Int ?? 0) >= 4 && probes["answered"] as? Int == probes["sent"] as? Int)
        #expect(probes["probesPerSecond"] as? Double == 100)
        #expect(probes["timeoutMilliseconds"] as? Double == 5000)
        let statsText = try await CLI.run(["stats", "--server", base]).stdout
        #expect(statsText.contains("cache-else-probe") && statsText.contains("answered"))
        let metrics = try await TestHTTP.get(port: service.httpPort, path: "/metrics")
        let exposition = String(decoding: metrics.body, as: UTF8.self)
        #expect(exposition.contains("presence_probes{outcome=\"answered\"}"))
        #expect(exposition.contains("presence_probe_refill_seconds_count"))

        let unknownPolicy = try await TestHTTP.get(
            port: service.httpPort, path: "/v1/presence/m1@\(server.domain)?policy=sometimes")
        #expect(unknownPolicy.status == 400)
        #expect(String(decoding: unknownPolicy.body, as: UTF8.self).contains("cache-else-probe"))
        let text = try await CLI.run(["query", "--server", base, "--policy", "probe", "m1@\(server.domain)"])
        #expect(text.stdout.contains("probe"), "the text output says where the answer came from")

        // A lookup that probes gets the same answer alone (decided on the event loop, handed to the router) and
        // pipelined behind a routed request (decided by the router): status, fields and document, the probe's
        // own times aside.
        let target = "/v1/presence?jid=m5@\(server.domain)&jid=m6@\(server.domain)&policy=probe"
        let request = "GET \(target) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        let alone = try LoopbackTCP.exchange(request, port: service.httpPort)
        let behind = try LoopbackTCP.exchange("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" + request, port: service.httpPort)
        func probed(_ wire: String) throws -> (head: [String], results: [NSDictionary]) {
            let last = try #require(wire.components(separatedBy: "HTTP/1.1 ").last)
            let parts = last.components(separatedBy: "\r\n\r\n")
            let head = parts[0].components(separatedBy: "\r\n").filter { !$0.hasPrefix("Date:") && !$0.hasPrefix("Content-Length:") }
            let document = try JSONSerialization.jsonObject(with: Data(parts[1].utf8)) as? [String: Any]
            let results = (document?["results"] as? [[String: Any]] ?? []).map { result in
                NSDictionary(dictionary: result.filter { $0.key != "asOf" && $0.key != "since" })
            }
            return (head, results)
        }
        let (aloneHead, aloneResults) = try probed(alone)
        let (behindHead, behindResults) = try probed(behind)
        #expect(aloneHead == behindHead && aloneHead.first == "200 OK", "\(alone)\n\(behind)")
        #expect(aloneResults == behindResults && aloneResults.count == 2, "\(alone)\n\(behind)")
        #expect(aloneResults.allSatisfy { $0["origin"] as? String == "probe" && $0["state"] as? String == "available" })
        _ = sessions
    }

    @Test(arguments: XMPPServerKind.allCases) func aServiceKilledWithSIGKILLHasEveryStatusBackFromTheServersSnapshotWhenStartedAgain(on kind: XMPPServerKind) async throws {
        let members = (1 ... 6).map { "p\($0)" }
        var accounts = Dictionary(uniqueKeysWithValues: members.map { ($0, "pw") })
        accounts["watcher"] = ServeXMPPTests.password
        let server = try await kind.start(accounts: accounts, groups: ["Staff": ["watcher"] + members])
        defer { server.stop() }
        func login(_ member: String, status: String, show: String? = nil) async throws -> MemberClient {
            let session = try await MemberClient(member, password: "pw", resource: "desk", server: server.endpoint)
            try await session.available(show: show, status: status)
            return session
        }
        var sessions: [String: MemberClient] = [:]
        for member in members.prefix(4) { sessions[member] = try await login(member, status: "\(member) at work") }
        let arguments = [
            "--xmpp-jid", "watcher@\(server.domain)", "--xmpp-password-file", try passwordFile(in: server.directory),
            "--xmpp-host", "127.0.0.1", "--xmpp-port", String(server.port),
        ]
        /// Whether every member's answer is live and says `expected` (a status text, or nil for offline).
        func allAnswer(_ expected: [String: String?], port: Int) async throws -> Bool {
            let path = "/v1/presence?" + members.map { "jid=\($0)@\(server.domain)" }.joined(separator: "&")
            guard let response = try? await TestHTTP.get(port: port, path: path),
                let document = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any],
                let results = document["results"] as? [[String: Any]]
            else { return false }
            return zip(members, results).allSatisfy { member, result in
                guard result["live"] as? Bool == true, let wanted = expected[member] else { return false }
                guard let wanted else { return result["state"] as? String == "offline" }
                return result["state"] as? String == "available" && result["status"] as? String == wanted
            }
        }
        var expected: [String: String?] = Dictionary(uniqueKeysWithValues: members.map { ($0, nil) })
        for member in members.prefix(4) { expected[member] = "\(member) at work" }
        let first = try RunningServer(arguments)
        #expect(try await eventually { try await allAnswer(expected, port: first.httpPort) })

        first.crash()
        // While the service is dead: p1 changes, p2 logs off, p5 logs on.
        try await sessions["p1"]!.available(show: "away", status: "p1 at lunch")
        expected["p1"] = "p1 at lunch"
        sessions.removeValue(forKey: "p2")?.logOff()
        expected["p2"] = .some(nil)
        sessions["p5"] = try await login("p5", status: "p5 just arrived")
        expected["p5"] = "p5 just arrived"

        let restarted = ContinuousClock.now
        let second = try RunningServer(arguments)
        defer { _ = second.stop() }
        #expect(
            try await eventually(timeout: TestDeadline.condition) { try await allAnswer(expected, port: second.httpPort) },
            "everyone's status is back from the server's snapshot, with what changed while the service was dead")
        // Not a timed assertion: the figure goes to the README's reliability section.
        print("statuses back \(restarted.duration(to: .now)) after the restart")
        #expect(second.stop() == 0)
        _ = sessions
    }

    @Test(arguments: XMPPServerKind.allCases) func aServerWithAPrivateCAIsWatchedOverVerifiedTLS(on kind: XMPPServerKind) async throws {
        let server = try await kind.start(
            accounts: ["watcher": ServeXMPPTests.password, "alice": "a"], groups: ["Staff": ["watcher", "alice"]],
            tls: true)
        defer { server.stop() }
        let alice = try await MemberClient("alice", password: "a", resource: "laptop", server: server.endpoint)
        try await alice.available(status: "Encrypted all the way")
        let service = try RunningServer([
            "--xmpp-jid", "watcher@\(server.domain)", "--xmpp-password-file", try passwordFile(in: server.directory),
            "--xmpp-host", "127.0.0.1", "--xmpp-port", String(server.port), "--xmpp-tls", "required",
            "--xmpp-ca-file", try #require(server.certificates).certificate.path,
        ])
        defer { _ = service.stop() }
        #expect(
            try await eventually { try await query("alice@example.test", port: service.httpPort)?["live"] as? Bool == true })
        #expect(
            try await query("alice@example.test", port: service.httpPort)?["status"] as? String == "Encrypted all the way")
        let source = try #require(try await stats(port: service.httpPort)?["source"] as? [String: Any])
        #expect(source["encrypted"] as? Bool == true)
        _ = alice
    }

    @Test(arguments: XMPPServerKind.allCases, [false, true])
    func sigtermClosesTheXMPPStreamAndExits(on kind: XMPPServerKind, tls: Bool) async throws {
        let server = try await kind.start(
            accounts: ["watcher": ServeXMPPTests.password, "alice": "a"], groups: ["Staff": ["watcher", "alice"]],
            tls: tls)
        defer { server.stop() }
        let service = try RunningServer(
            [
                "--xmpp-jid", "watcher@\(server.domain)", "--xmpp-password-file", try passwordFile(in: server.directory),
                "--xmpp-host", "127.0.0.1", "--xmpp-port", String(server.port),
            ]
                + (tls
                    ? ["--xmpp-tls", "required", "--xmpp-ca-file", try #require(server.certificates).certificate.path]
                    : []))
        defer { _ = service.stop() }
        #expect(
            try await eventually {
                (try await stats(port: service.httpPort)?["source"] as? [String: Any])?["live"] as? Bool == true
            })
        let started = ContinuousClock.now
        #expect(service.stop() == 0)
        PromiseLog.record(
            "SIGTERM with an XMPP session on \(kind)\(tls ? " over TLS" : "")", promise: PromiseLog.Promise.stopped,
            measured: started.duration(to: .now))
        #expect(service.log.contains("XMPP source stopped"))
        if kind == .ejabberd {
            // ejabberd logs how each session ended: a stream the client closed is not a lost connection.
            let logFile = server.directory.appendingPathComponent("ejabberd.log")
            func closing() -> [Substring] {
                let log = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
                return log.split(separator: "\n").filter { $0.contains("Closing c2s session for watcher@") }
            }
            #expect(try await eventually(timeout: TestDeadline.condition) { !closing().isEmpty })
            print(closing().joined(separator: "\n"))
            #expect(closing().allSatisfy { !$0.contains("connection closed") }, "\(closing())")
        }
    }

    @Test(arguments: XMPPServerKind.allCases)
    func sigtermInTheMiddleOfAResyncEndsTheServiceAtOnce(on kind: XMPPServerKind) async throws {
        let people = ["alice", "bob", "carol", "dave", "erin", "frank"]
        let server = try await kind.start(
            accounts: Dictionary(uniqueKeysWithValues: people.map { ($0, "pw") }).merging(
                ["watcher": ServeXMPPTests.password]) { $1 },
            groups: ["Staff": ["watcher"] + people])
        defer { server.stop() }
        var sessions: [MemberClient] = []
        for person in people {
            let member = try await MemberClient(person, password: "pw", resource: "desk", server: server.endpoint)
            try await member.available(status: "Here")
            sessions.append(member)
        }
        // One member a second: each resync of the six online takes about six seconds, starting a second after the
        // last one ended, so the service is nearly always in the middle of one.
        let service = try await RunningServer.started([
            "--xmpp-jid", "watcher@\(server.domain)", "--xmpp-password-file", try passwordFile(in: server.directory),
            "--xmpp-host", "127.0.0.1", "--xmpp-port", String(server.port), "--resync-interval", "1",
            "--resync-rate", "1",
        ])
        defer { _ = service.stop() }
        #expect(
            try await eventually {
                (try await stats(port: service.httpPort)?["source"] as? [String: Any])?["live"] as? Bool == true
            })
        func source() async throws -> [String: Any] {
            try await stats(port: service.httpPort)?["source"] as? [String: Any] ?? [:]
        }
        // The first resync took its six seconds; the service's log says when the next begins, and SIGTERM goes a
        // second into it, long before its six members are asked at one a second.
        #expect(try await eventually(timeout: TestDeadline.condition) { try await source()["resyncs"] as? Int == 1 })
        #expect(try await source()["lastResyncMilliseconds"] as? Double ?? 0 >= 4000)
        func count(_ line: String) -> Int { service.log.components(separatedBy: line).count - 1 }
        #expect(try await eventually(timeout: TestDeadline.condition) { count("resync begins") >= 2 })
        try await Task.sleep(for: .seconds(1))
        let started = ContinuousClock.now
        #expect(await service.stopped(within: TestDeadline.shutdown) == 0)
        #expect(count("resync complete") == count("resync begins") - 1, "stopped in the middle of a resync")
        PromiseLog.record(
            "SIGTERM in the middle of a resync on \(kind)", promise: PromiseLog.Promise.stopped,
            measured: started.duration(to: .now))
        _ = sessions
    }

    @Test func anXMPPAccountWithoutAPasswordFileIsRefusedBeforeStarting() async throws {
        let result = try await CLI.run(["serve", "--xmpp-jid", "watcher@example.test", "--http", "127.0.0.1:0"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--xmpp-password-file"))
        let noUser = try await CLI.run(["serve", "--xmpp-jid", "example.test", "--xmpp-password-file", "/dev/null"])
        #expect(noUser.status == 64)
        #expect(noUser.stderr.contains("user part"))
    }
}
