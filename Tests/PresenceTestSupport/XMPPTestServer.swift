import Foundation

/// A real XMPP server from Debian, started by a test on free loopback ports with a configuration and data of its
/// own: what the XMPP suites run against, once per implementation.
///
/// Every implementation has the same accounts, shared roster groups and optional STARTTLS, so a suite states
/// what must hold on any RFC 6121 server and runs it on each (`@Test(arguments: XMPPServerKind.allCases)`).
package protocol XMPPTestServer: AnyObject, Sendable {
    var kind: XMPPServerKind { get }
    var domain: String { get }
    /// The client-to-server port, on 127.0.0.1.
    var port: Int { get }
    /// The server's own temporary directory (configuration, data, logs), removed by ``stop()``.
    var directory: URL { get }
    /// The authority that issued the server's certificate, when it requires STARTTLS.
    var certificates: TestCertificateAuthority? { get }
    /// The server's API that lists every session (``EjabberdSessionDirectory``), nil when it has none: ejabberd's
    /// `mod_http_api`, which grants the command to the account `watcher` only.
    var sessionsAPI: URL? { get }
    /// Kills the server at once, as a crash would: every session is cut without a stream close; the accounts
    /// survive for ``restart()``.
    func kill() async
    /// Freezes the server (SIGSTOP): connections stay open and nothing answers, as with a hung host.
    func pause()
    /// Lets a paused server run again (SIGCONT).
    func resume()
    /// Starts the server again on the same port with the same data (after ``kill()``).
    func restart() async throws
    /// Registers another account on the running server.
    func register(_ user: String, password: String) throws
    /// Kills the server and removes its directory (at once: what it would keep is not needed again).
    func stop()
}

/// The XMPP server implementations the suites run against.
package enum XMPPServerKind: String, CaseIterable, Sendable, CustomStringConvertible {
    /// Prosody: one process, one event loop, stanzas handled in the order they arrive.
    case prosody
    /// ejabberd: an Erlang process per session, so presences produced by different sessions reach a client in no
    /// global order.
    case ejabberd

    package var description: String { rawValue }

    /// Starts a server of this kind.
    /// - Parameters:
    ///   - accounts: user name (localpart) → password.
    ///   - groups: group name → the localparts in it; every member of a group has every other in its roster
    ///     with a mutual subscription (a shared roster group displayed to itself).
    ///   - tls: serve STARTTLS with a certificate for `domain` and require it.
    ///   - profile: the client limits it runs with.
    package func start(
        domain: String = "example.test", accounts: [String: String], groups: [String: [String]] = [:],
        tls: Bool = false, profile: ServerProfile = .unshaped
    ) async throws -> any XMPPTestServer {
        try await onAThreadOfItsOwn {
            switch self {
            case .prosody:
                try ProsodyServer(domain: domain, accounts: accounts, groups: groups, tls: tls, profile: profile)
            case .ejabberd:
                try EjabberdServer(domain: domain, accounts: accounts, groups: groups, tls: tls, profile: profile)
            }
        }
    }
}

extension XMPPTestServer {
    /// Where members connect to this server.
    package var endpoint: XMPPEndpoint {
        XMPPEndpoint(domain: domain, port: port, caFile: certificates?.certificate.path)
    }
}

/// A loopback port nobody listens on now, for a server that cannot be given port 0 and report what it bound. Taken
/// by someone else before the server binds it, the server never listens on it: the fixtures see that
/// (``ListeningPort``) and try again with another.
package func freeLoopbackPort() -> Int {
    let (descriptor, port) = LoopbackTCP.boundSocket(listening: false)
    close(descriptor)
    return port
}
