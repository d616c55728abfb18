import Foundation
import PresenceModel
import PresenceTestSupport
import Testing
import XMPPClient
import XMPPStream

private func configuration(
    _ server: any XMPPTestServer, user: String = "watcher", password: String = "pw", resource: String = "test",
    tls: TLSPolicy? = nil, caFile: String? = nil, keepAlive: KeepAlive? = nil
) throws -> XMPPClientConfiguration {
    XMPPClientConfiguration(
        account: try BareJID("\(user)@\(server.domain)"), password: password, resource: resource, host: "127.0.0.1",
        port: server.port, tls: tls, trustedCertificatesFile: caFile, keepAlive: keepAlive)
}

/// The error a login attempt ends with, or nil when it logs in.
private func loginError(_ configuration: XMPPClientConfiguration) async -> XMPPClientError? {
    do {
        try await XMPPConnection.withSession(configuration) { _ in }
        return nil
    } catch let error as XMPPClientError {
        return error
    } catch {
        Issue.record("unexpected \(error)")
        return nil
    }
}

@Suite("The client connection against real Prosody and ejabberd", .realServers)
struct XMPPConnectionTests {
    @Test(arguments: XMPPServerKind.allCases) func startTLSWithTheServersCAFileVerifiesTheCertificateAndLogsIn(on kind: XMPPServerKind) async throws {
        let server = try await kind.start(accounts: ["watcher": "pw"], tls: true)
        defer { server.stop() }
        let ca = try #require(server.certificates).certificate.path
        let (encrypted, mechanism, jid) = try await XMPPConnection.withSession(
            try configuration(server, tls: .required, caFile: ca)
        ) { session in (session.isEncrypted, session.mechanism, session.jid) }
        #expect(encrypted)
        #expect(mechanism.hasPrefix("SCRAM-SHA-"))
        #expect(jid == "watcher@example.test/test")
    }

    @Test(arguments: XMPPServerKind.allCases) func aCertificateFromAnUntrustedAuthorityIsRefusedWithTheReason(on kind: XMPPServerKind) async throws {
        let server = try await kind.start(accounts: ["watcher": "pw"], tls: true)
        defer { server.stop() }
        let error = await loginError(try configuration(server, tls: .required))
        guard case .tls(let reason) = error else {
            Issue.record("expected a TLS failure, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("CERTIFICATE_VERIFY_FAILED"))
    }

    @Test(arguments: XMPPServerKind.allCases) func requiredTLSRefusesAServerThatDoesNotOfferIt(on kind: XMPPServerKind) async throws {
        let server = try await kind.start(accounts: ["watcher": "pw"])
        defer { server.stop() }
        let error = await loginError(try configuration(server, tls: .required))
        guard case .tls(let reason) = error else {
            Issue.record("expected a TLS failure, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("does not offer STARTTLS"))
    }

    @Test(arguments: XMPPServerKind.allCases) func aServerThatRequiresTLSIsNotLoggedInToWithTLSOff(on kind: XMPPServerKind) async throws {
        let server = try await kind.start(accounts: ["watcher": "pw"], tls: true)
        defer { server.stop() }
        let error = await loginError(try configuration(server, tls: .off))
        guard case .tls(let reason) = error else {
            Issue.record("expected a TLS failure, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("requires STARTTLS"))
    }

    @Test(arguments: XMPPServerKind.allCases) func aWrongPasswordIsNotAuthorized(on kind: XMPPServerKind) async throws {
        let server = try await kind.start(accounts: ["watcher": "pw"])
        defer { server.stop() }
        let error = await loginError(try configuration(server, password: "nope"))
        guard case .authentication(.refused(let condition, _)) = error else {
            Issue.record("expected a refused login, got \(String(describing: error))")
            return
        }
        #expect(condition == "not-authorized")
        #expect(error?.isPermanent == true)
    }

    @Test func nobodyListeningIsAConnectError() async throws {
        let (descriptor, port) = LoopbackTCP.boundSocket(listening: false)
        close(descriptor)
        let config = XMPPClientConfiguration(
            account: try BareJID("watcher@example.test"), password: "pw", host: "127.0.0.1", port: port)
        let error = await loginError(config)
        guard case .connect(let host, let errorPort, _) = error else {
            Issue.record("expected a connect failure, got \(String(describing: error))")
            return
        }
        #expect(host == "127.0.0.1" && errorPort == port)
    }

    @Test func aServerThatNeverAnswersTimesTheLoginOut() async throws {
        // A listening socket nobody accepts from: the kernel completes the TCP handshake, nothing else happens.
        let (descriptor, port) = LoopbackTCP.boundSocket(listening: true)
        defer { close(descriptor) }
        let config = XMPPClientConfiguration(
            account: try BareJID("watcher@example.test"), password: "pw", host: "127.0.0.1", port: port,
            negotiationTimeout: .milliseconds(300))
        #expect(await loginError(config) == .negotiationTimedOut(.milliseconds(300)))
    }

    @Test(arguments: XMPPServerKind.allCases) func aSecondLoginWithTheSameResourceEndsTheFirstWithAConflictStreamError(on kind: XMPPServerKind) async throws {
        let server = try await kind.start(accounts: ["watcher": "pw"])
        defer { server.stop() }
        let config = try configuration(server)
        let error = await loginError(config)  // warm-up: the account works
        #expect(error == nil)
        let result: Result<Void, XMPPClientError> = try await XMPPConnection.withSession(config) { first in
            try await XMPPConnection.withSession(config) { _ in }
            do throws(XMPPClientError) {
                while try await first.next() != nil {}
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        guard case .failure(.streamError(let condition, _)) = result else {
            Issue.record("expected a stream error, got \(result)")
            return
        }
        #expect(condition == "conflict")
    }

    @Test(arguments: XMPPServerKind.allCases) func aHungServerIsFoundDeadByTheKeepAlive(on kind: XMPPServerKind) async throws {
        let server = try await kind.start(accounts: ["watcher": "pw"])
        defer { server.stop() }
        let keepAlive = KeepAlive(interval: .milliseconds(300), timeout: .milliseconds(300))
        let result: Result<Void, XMPPClientError> = try await XMPPConnection.withSession(
            try configuration(server, keepAlive: keepAlive)
        ) { session in
            server.pause()
            defer { server.resume() }
            do throws(XMPPClientError) {
                while try await session.next() != nil {}
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        guard case .failure(.deadConnection(let silence)) = result else {
            Issue.record("expected a dead connection, got \(result)")
            return
        }
        #expect(silence >= .milliseconds(600))
    }

    @Test(arguments: XMPPServerKind.allCases) func anAnsweringServerIsKeptAliveByPings(on kind: XMPPServerKind) async throws {
        let server = try await kind.start(accounts: ["watcher": "pw"])
        defer { server.stop() }
        // The answer to a ping may take a second or more on a loaded machine (ThreadSanitizer): the timeout
        // leaves room for that, while the silence below is still twice the dead-connection limit.
        let keepAlive = KeepAlive(interval: .milliseconds(500), timeout: .seconds(2))
        let answered = try await XMPPConnection.withSession(try configuration(server, keepAlive: keepAlive)) {
            session in
            // Twice the dead-connection limit without reading: only keep-alive pings and answers flow.
            try await Task.sleep(for: .seconds(5))
            try await session.send(IQ.ping(id: "still-there"))
            while let stanza = try await session.next() {
                if IQ(stanza)?.id == "still-there" { return true }
            }
            return false
        }
        #expect(answered)
    }
}

@Suite("Reconnect backoff")

struct ReconnectBackoffTests {
    @Test func delaysGrowExponentiallyWithJitterUpToTheMaximum() {
        var backoff = ReconnectBackoff(initial: .seconds(1), maximum: .seconds(8))
        var generator = SeededGenerator(state: 42)
        let steps: [Duration] = [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(8)]
        for step in steps {
            let delay = backoff.nextDelay(using: &generator)
            #expect(delay >= step / 2 && delay <= step, "\(delay) within [\(step / 2), \(step)]")
        }
    }

    @Test func aSuccessfulLoginStartsOverAndAPermanentFailureWaitsTheMaximum() {
        var backoff = ReconnectBackoff(initial: .seconds(1), maximum: .seconds(60))
        _ = backoff.nextDelay()
        _ = backoff.nextDelay()
        backoff.reset()
        #expect(backoff.nextDelay() <= .seconds(1))
        #expect(backoff.nextDelay(permanentFailure: true) >= .seconds(30))
    }

    @Test func jitterSpreadsClientsCutOffTogether() {
        let delays = (0 ..< 50).map { _ in
            var backoff = ReconnectBackoff(initial: .seconds(10))
            return backoff.nextDelay()
        }
        #expect(Set(delays).count > 40)
    }
}

/// A deterministic generator (SplitMix64) for the jitter bounds.
private struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
