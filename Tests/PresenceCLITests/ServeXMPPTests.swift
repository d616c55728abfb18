import Foundation
import LoopbackHTTP
import PresenceTestSupport
import Testing

/// `presence serve --xmpp-jid` against a real Prosody: the operator's setup from the README, end to end.
@Suite("presence serve watching a real XMPP server", .serialized)
struct ServeXMPPTests {
    static let password = "watch-them-all ✓"

    private func passwordFile(in directory: URL) throws -> String {
        let file = directory.appendingPathComponent("watcher.password")
        try (ServeXMPPTests.password + "\n").write(to: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        return file.path
    }

    private func query(_ jid: String, port: Int) throws -> [String: Any]? {
        let result = try CLI.run(["query", "--server", "http://127.0.0.1:\(port)", "--format", "json", jid])
        let document = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return (document?["results"] as? [[String: Any]])?.first
    }

    private func stats(port: Int) throws -> [String: Any]? {
        let result = try CLI.run(["stats", "--server", "http://127.0.0.1:\(port)", "--format", "json"])
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
    }

    @Test func theServiceShowsTheRostersLiveStatusesAndSaysWhenTheyAreNoLongerLive() async throws {
        let server = try ProsodyServer(
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
            try await eventually { try query("alice@example.test", port: service.httpPort)?["live"] as? Bool == true })
        let answer = try #require(try query("alice@example.test", port: service.httpPort))
        #expect(answer["state"] as? String == "available")
        #expect(answer["show"] as? String == "dnd")
        #expect(answer["status"] as? String == "Reviewing <the> budget")
        #expect(answer["resource"] as? String == "laptop")
        #expect(try query("bob@example.test", port: service.httpPort)?["state"] as? String == "offline")
        #expect(try query("zed@example.test", port: service.httpPort)?["state"] as? String == "unknown")

        let source = try #require(try stats(port: service.httpPort)?["source"] as? [String: Any])
        #expect(source["kind"] as? String == "xmpp")
        #expect(source["jid"] as? String == "watcher@example.test")
        #expect(source["connected"] as? Bool == true)
        #expect(source["rosterSize"] as? Int == 2)
        let text = try CLI.run(["stats", "--server", "http://127.0.0.1:\(service.httpPort)"])
        #expect(text.stdout.contains("xmpp watcher@example.test at 127.0.0.1:\(server.port)"))
        let metrics = try LoopbackHTTPClient.get(host: "127.0.0.1", port: service.httpPort, path: "/metrics")
        #expect(String(decoding: metrics.body, as: UTF8.self).contains("presence_xmpp_live 1"))

        // The server goes away: answers stay as of the drop and say they are not live.
        server.kill()
        #expect(
            try await eventually { try query("alice@example.test", port: service.httpPort)?["live"] as? Bool == false })
        #expect(try query("alice@example.test", port: service.httpPort)?["state"] as? String == "available")
        let down = try #require(try stats(port: service.httpPort)?["source"] as? [String: Any])
        #expect(down["connected"] as? Bool == false)
        #expect(down["disconnectedSince"] as? String != nil)
        let queryText = try CLI.run(["query", "--server", "http://127.0.0.1:\(service.httpPort)", "alice@example.test"])
        #expect(queryText.stdout.contains("not live"))

        #expect(!service.log.contains(ServeXMPPTests.password), "the password is never logged")
        #expect(service.stop() == 0)
        _ = alice
    }

    @Test func aServerWithAPrivateCAIsWatchedOverVerifiedTLS() async throws {
        let server = try ProsodyServer(
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
            try await eventually { try query("alice@example.test", port: service.httpPort)?["live"] as? Bool == true })
        #expect(
            try query("alice@example.test", port: service.httpPort)?["status"] as? String == "Encrypted all the way")
        let source = try #require(try stats(port: service.httpPort)?["source"] as? [String: Any])
        #expect(source["encrypted"] as? Bool == true)
        _ = alice
    }

    @Test func anXMPPAccountWithoutAPasswordFileIsRefusedBeforeStarting() throws {
        let result = try CLI.run(["serve", "--xmpp-jid", "watcher@example.test", "--http", "127.0.0.1:0"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--xmpp-password-file"))
        let noUser = try CLI.run(["serve", "--xmpp-jid", "example.test", "--xmpp-password-file", "/dev/null"])
        #expect(noUser.status == 64)
        #expect(noUser.stderr.contains("user part"))
    }
}
