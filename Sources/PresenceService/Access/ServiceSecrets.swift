import NIOSSL
import PresenceStore

/// The secrets a running service holds: the API's tokens, the feed's shared secret and the TLS certificate and
/// key. Each is read from here for every new request or connection, so that SIGHUP can replace them (a token
/// revoked, a certificate renewed) without a restart and without dropping a connection that is open: what is
/// open keeps the certificate it was made with.
public final class ServiceSecrets: Sendable {
    private struct Current {
        var access: APIAccess
        var feedSecret: FeedSecret?
        var tls: NIOSSLContext?
    }

    private let current: Locked<Current>

    /// - Throws: when `tls` cannot be made into a context (a key that does not match its certificate).
    public init(access: APIAccess, feedSecret: FeedSecret?, tls: TLSConfiguration?) throws {
        current = Locked(
            Current(access: access, feedSecret: feedSecret, tls: try tls.map { try NIOSSLContext(configuration: $0) }))
    }

    /// Who may read the API now.
    public var access: APIAccess { current.withLock { $0.access } }
    /// The feed's shared secret now; nil when feeders need none.
    public var feedSecret: FeedSecret? { current.withLock { $0.feedSecret } }
    /// The TLS context new connections get; nil when the listeners are plain.
    var tlsContext: NIOSSLContext? { current.withLock { $0.tls } }
    /// Whether the listeners use TLS (fixed for the process's life).
    public var usesTLS: Bool { tlsContext != nil }

    /// Replaces the tokens. A service started with tokens keeps requiring one: a new file with none is refused.
    func replace(access: APIAccess) throws(ReloadError) {
        try current.withLock { (state: inout Current) throws(ReloadError) in
            guard access.requiresToken == state.access.requiresToken else {
                throw ReloadError(reason: "the new file has no token: the API would be open to anyone")
            }
            state.access = access
        }
    }

    func replace(feedSecret: FeedSecret) { current.withLock { $0.feedSecret = feedSecret } }

    /// Replaces the certificate and key new connections get.
    func replace(tls: TLSConfiguration) throws(ReloadError) {
        let context: NIOSSLContext
        do { context = try NIOSSLContext(configuration: tls) } catch {
            throw ReloadError(reason: "\(error)")
        }
        current.withLock { $0.tls = context }
    }

    /// Why a new secret was not taken: the old one stays in force.
    public struct ReloadError: Error, CustomStringConvertible {
        public var reason: String
        public init(reason: String) { self.reason = reason }
        public var description: String { reason }
    }
}

/// How to read each secret again from where it came from (its file), for SIGHUP. Nil for a secret the service
/// does not have.
public struct SecretReloading: Sendable {
    public var access: (@Sendable () throws -> APIAccess)?
    public var feedSecret: (@Sendable () throws -> FeedSecret)?
    public var tls: (@Sendable () throws -> TLSConfiguration)?

    public init(
        access: (@Sendable () throws -> APIAccess)? = nil, feedSecret: (@Sendable () throws -> FeedSecret)? = nil,
        tls: (@Sendable () throws -> TLSConfiguration)? = nil
    ) {
        self.access = access
        self.feedSecret = feedSecret
        self.tls = tls
    }
}
