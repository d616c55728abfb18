import Foundation
import PresenceTestSupport
import Testing

/// `presence serve --xmpp-sessions-api`: ejabberd's list of sessions asked instead of one question per member.
@Suite("presence serve asks ejabberd's list of sessions", .realServers)
struct ServeSessionsAPITests {
    @Test func aClusterWhereEveryoneSeesEveryoneIsExactFromOneListOfSessionsWithMembersOnEitherNode() async throws {
        let people = (0 ..< 40).map { String(format: "p%02d", $0) }
        let cluster = try await onAThreadOfItsOwn {
            try EjabberdCluster(
                accounts: Dictionary(uniqueKeysWithValues: people.map { ($0, "pw") }).merging(
                    ["watcher": ServeReplicaTests.password]) { $1 },
                groups: ["Everyone": ["@all@"]])
        }
        defer { cluster.stop() }
        // p00 on the node the watcher uses, p01 on the other only, p02 on both.
        var sessions: [MemberClient] = []
        for (user, resource, node) in [
            ("p00", "desk", cluster.first), ("p01", "laptop", cluster.second), ("p02", "desk", cluster.first),
            ("p02", "phone", cluster.second),
        ] {
            let member = try await MemberClient(user, password: "pw", resource: resource, server: node.endpoint)
            try await member.available(status: "On \(resource)")
            sessions.append(member)
        }
        let api = try #require(cluster.first.sessionsAPI)
        let replica = try await RunningServer.started(
            try ServeReplicaTests.replicaArguments(cluster.first, resource: "sessions") + [
                "--xmpp-sessions-api", api.absoluteString,
            ])
        defer { _ = replica.stop() }
        #expect(
            try await eventually(timeout: TestDeadline.serverCycle) {
                try await ServeReplicaTests.get("/readyz", port: replica.httpPort).status == 200
            })
        for user in ["p00", "p01", "p02"] {
            let answer = try await ServeReplicaTests.answer("\(user)@example.test", port: replica.httpPort)
            #expect(answer?["state"] as? String == "available", "\(user): \(answer ?? [:])")
        }
        for user in people.dropFirst(3) {
            let answer = try await ServeReplicaTests.answer("\(user)@example.test", port: replica.httpPort)
            #expect(answer?["state"] as? String == "offline", "\(user): \(answer ?? [:])")
        }
        let source = try #require(try await ServeReplicaTests.source(port: replica.httpPort))
        #expect(source["sessionDirectoryAnswers"] as? Int ?? 0 >= 1, "\(source)")
        #expect(source["sessionDirectoryError"] is NSNull, "\(source)")
        #expect(await replica.stopped() == 0)
        _ = sessions
    }

    @Test func sigtermIsPromptWhileTheListOfSessionsDoesNotAnswer() async throws {
        let people = (0 ..< 10).map { String(format: "p%02d", $0) }
        let server = try await XMPPServerKind.ejabberd.start(
            accounts: Dictionary(uniqueKeysWithValues: people.map { ($0, "pw") }).merging(
                ["watcher": ServeReplicaTests.password]) { $1 },
            groups: ["Everyone": ["@all@"]])
        defer { server.stop() }
        // An API address that takes the connection and never answers: a firewall that drops, a hung proxy.
        let (silent, port) = LoopbackTCP.boundSocket(listening: true)
        defer { close(silent) }
        let replica = try await RunningServer.started(
            try ServeReplicaTests.replicaArguments(server, resource: "silent-api") + [
                "--xmpp-sessions-api", "http://127.0.0.1:\(port)/api",
            ])
        defer { _ = replica.stop() }
        #expect(
            try await eventually(timeout: TestDeadline.condition) {
                let source = try await ServeReplicaTests.source(port: replica.httpPort)
                return source?["rosterSize"] as? Int == people.count
            })
        try await Task.sleep(for: .seconds(1))
        let source = try #require(try await ServeReplicaTests.source(port: replica.httpPort))
        #expect(source["live"] as? Bool == false, "the snapshot waits for the list: \(source)")
        let (status, took) = await XMPPServerFailureTests.ServerRateLimitTests.terminate(replica)
        PromiseLog.record(
            "SIGTERM while the list of sessions does not answer", promise: PromiseLog.Promise.stopped, measured: took)
        #expect(status == 0)
    }

    @Test(arguments: [
        ("http://xmpp.corp.example:5280/api", "unencrypted"),
        ("ftp://127.0.0.1/api", "http or https only"),
        ("corp.example/api", "is not a URL"),
        ("https://admin:hunter2@xmpp.corp.example:5443/api", "no user or password in the URL"),
    ])
    func aSessionsAPIThatWouldLeakThePasswordOrIsNoURLIsRefusedBeforeStarting(url: String, says: String) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("presence-sessions-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try CLI.run(
            try ServeReplicaTests.replicaArgumentsToNowhere(in: directory).prepending("serve") + [
                "--xmpp-sessions-api", url,
            ])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("--xmpp-sessions-api") && result.stderr.contains(says), "\(result.stderr)")
    }
}

extension Array {
    fileprivate func prepending(_ element: Element) -> [Element] { [element] + self }
}
