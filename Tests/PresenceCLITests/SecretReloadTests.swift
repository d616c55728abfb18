import Foundation
import PresenceTestSupport
import Testing

/// SIGHUP reads the token file, the feed secret and the TLS certificate and key again: a revoked token stops
/// working and a renewed certificate is served without a restart; a bad new file is refused with a log line and
/// the old one stays in force; open connections are not dropped.
@Suite("SIGHUP reloads the service's secrets", .realServers)
struct SecretReloadTests {
    static let first = "first-token-0123456789abcdef"
    static let second = "second-token-0123456789abcdef"

    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("presence-reload-\(UUID())")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func write(_ text: String, to url: URL) throws {
        try text.write(to: url, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
    }

    static func status(_ token: String, port: Int, transport: TestTransport = .plain) async -> Int? {
        try? await TestHTTP.get(
            host: transport.tls != nil ? "localhost" : "127.0.0.1", port: port, path: "/v1/stats",
            headers: ["Authorization": "Bearer \(token)"], transport: transport
        ).status
    }

    static func hangUp(_ server: RunningServer) { kill(server.process.processIdentifier, SIGHUP) }

    @Test func aRevokedTokenStopsWorkingAndABadNewFileLeavesTheOldTokensInForce() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokens = directory.appendingPathComponent("tokens")
        try Self.write("\(Self.first) dashboard\n", to: tokens)
        let server = try RunningServer(["--api-token-file", tokens.path])
        defer { _ = server.stop() }
        #expect(await Self.status(Self.first, port: server.httpPort) == 200)
        #expect(await Self.status(Self.second, port: server.httpPort) == 401)
        // A change stream opened with the first token before it is revoked.
        let stream = try await TestEventStream(
            host: "127.0.0.1", port: server.httpPort, path: "/v1/presence/events?jid=alice@example.com",
            headers: ["Authorization": "Bearer \(Self.first)"])
        #expect(stream.status == 200)
        _ = try await stream.next()

        try Self.write("\(Self.second) dashboard\n", to: tokens)
        Self.hangUp(server)
        #expect(try await eventually { await Self.status(Self.second, port: server.httpPort) == 200 })
        #expect(await Self.status(Self.first, port: server.httpPort) == 401, "the revoked token is refused")
        #expect(await server.logs("reloaded API tokens"))
        // The stream opened before goes on: a change still reaches it.
        let feeder = try LoopbackTCP.connect(port: server.feedPort)
        let stanza = "<presence from='alice@example.com/desk'><status>after the reload</status></presence>"
        try Array(stanza.utf8).withUnsafeBytes { try LoopbackTCP.sendAll(feeder, $0) }
        close(feeder)
        let event = try #require(try await stream.next())
        #expect(event.data.contains("after the reload"), "an open stream is not dropped")
        stream.close()

        // Bad new files: a token too short, and a file with no token (the API would be open to anyone).
        for bad in ["short\n", "# nobody\n"] {
            try Self.write(bad, to: tokens)
            Self.hangUp(server)
            #expect(try await eventually { server.log.components(separatedBy: "refused the new API tokens").count > (bad == "short\n" ? 1 : 2) })
            #expect(await Self.status(Self.second, port: server.httpPort) == 200, "the old tokens stay in force")
        }
        #expect(server.process.isRunning)
        #expect(!server.log.contains(Self.second) && !server.log.contains(Self.first), "tokens never reach the log")
    }

    @Test func aNewFeedSecretIsWhatNewFeedersMustProveAndAnEmptyFileLeavesItInForce() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let secretFile = directory.appendingPathComponent("feed.secret")
        let (old, new) = ("feed-secret-before-0451", "feed-secret-after-9316")
        try Self.write(old + "\n", to: secretFile)
        let server = try RunningServer(["--feed-secret-file", secretFile.path])
        defer { _ = server.stop() }
        func feeds(proving secret: String) throws -> Bool {
            let fed = try ServeAccessTests.python(
                ServeAccessTests.componentFeeder, ["127.0.0.1", String(server.feedPort), secret, "-"])
            return fed.status == 0 && fed.output.contains("fed")
        }
        #expect(try feeds(proving: old))
        #expect(try !feeds(proving: new))

        try Self.write(new + "\n", to: secretFile)
        Self.hangUp(server)
        #expect(try await eventually { server.log.contains("reloaded feed secret") })
        #expect(try feeds(proving: new), "a new feeder proves the new secret")
        #expect(try !feeds(proving: old), "the old secret no longer opens the feed port")

        try Self.write("", to: secretFile)
        Self.hangUp(server)
        #expect(try await eventually { server.log.contains("refused the new feed secret") })
        #expect(try feeds(proving: new), "the secret in force stays after a bad new file")
        // What an operator alerts on: a reload refused (a renewal that did not take) and one accepted.
        let metrics = String(
            decoding: try await TestHTTP.get(port: server.httpPort, path: "/metrics").body,
            as: UTF8.self)
        func reloads(_ outcome: String) -> String? {
            metrics.split(separator: "\n").first {
                $0.hasPrefix("presence_secret_reloads_total{") && $0.contains("secret=\"feed-secret\"")
                    && $0.contains("outcome=\"\(outcome)\"")
            }.map { String($0.split(separator: " ").last ?? "") }
        }
        #expect(reloads("accepted") == "1" && reloads("refused") == "1", "\(metrics)")
        #expect(!server.log.contains(old) && !server.log.contains(new), "secrets never reach the log")
    }

    @Test func aRenewedCertificateIsServedToNewConnectionsAndABrokenOneIsRefused() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let old = try TestCertificateAuthority(directory: try Self.directory(), serverName: "localhost")
        let renewed = try TestCertificateAuthority(directory: try Self.directory(), serverName: "localhost")
        defer {
            try? FileManager.default.removeItem(at: old.certificate.deletingLastPathComponent())
            try? FileManager.default.removeItem(at: renewed.certificate.deletingLastPathComponent())
        }
        let certificate = directory.appendingPathComponent("tls.pem")
        let key = directory.appendingPathComponent("tls.key")
        let tokens = directory.appendingPathComponent("tokens")
        try Self.write("\(Self.first)\n", to: tokens)
        func install(_ authority: TestCertificateAuthority) throws {
            try Self.write(String(contentsOf: authority.serverCertificate, encoding: .utf8), to: certificate)
            try Self.write(String(contentsOf: authority.serverKey, encoding: .utf8), to: key)
        }
        try install(old)
        let server = try RunningServer([
            "--tls-cert", certificate.path, "--tls-key", key.path, "--api-token-file", tokens.path,
        ])
        defer { _ = server.stop() }
        let trustingOld = TestTransport(tls: true, caFile: old.certificate.path)
        let trustingRenewed = TestTransport(tls: true, caFile: renewed.certificate.path)
        #expect(await Self.status(Self.first, port: server.httpPort, transport: trustingOld) == 200)
        #expect(await Self.status(Self.first, port: server.httpPort, transport: trustingRenewed) == nil)
        // A stream over the old certificate, open across the renewal.
        let stream = try await TestEventStream(
            host: "localhost", port: server.httpPort, path: "/v1/presence/events?jid=bob@example.com",
            headers: ["Authorization": "Bearer \(Self.first)"], transport: trustingOld)
        _ = try await stream.next()

        try install(renewed)
        Self.hangUp(server)
        #expect(try await eventually { await Self.status(Self.first, port: server.httpPort, transport: trustingRenewed) == 200 })
        #expect(await Self.status(Self.first, port: server.httpPort, transport: trustingOld) == nil, "new connections get the new one")
        // The stream over the old certificate is still open: a change fed now (over TLS, on a new connection,
        // so with the renewed certificate) reaches it.
        let feeder = try await TLSFeeder(host: "localhost", port: server.feedPort, transport: trustingRenewed)
        try await feeder.send(Array("<presence from='bob@example.com/desk'><status>renewed</status></presence>".utf8))
        let event = try #require(try await stream.next())
        #expect(event.data.contains("renewed"), "an open connection keeps its certificate and is not dropped")
        feeder.close()

        // A broken certificate: refused, the renewed one stays.
        try Self.write("-----BEGIN CERTIFICATE-----\nbroken\n-----END CERTIFICATE-----\n", to: certificate)
        Self.hangUp(server)
        #expect(try await eventually { server.log.contains("refused the new TLS certificate and key") })
        #expect(await Self.status(Self.first, port: server.httpPort, transport: trustingRenewed) == 200)
        stream.close()
        #expect(server.process.isRunning)
    }
}
