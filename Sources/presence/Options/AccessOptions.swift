import ArgumentParser
import Logging
import NIOSSL
import PresenceService

/// Who may use the service: API tokens, the feed's shared secret, TLS for both listeners, and what `--allow-remote`
/// requires of them.
///
/// On loopback everything is open by default. A listener on any other address must authenticate and
/// encrypt: the query API needs `--api-token-file`, the feed port `--feed-secret-file`, and both TLS
/// (`--tls-cert` and `--tls-key`) unless `--insecure-http` says plain TCP is meant. A missing piece is a usage
/// error (exit 64) that names it.
struct AccessOptions: ParsableArguments {
    @Option(
        name: .customLong("api-token-file"),
        help: "File of bearer tokens for the query API, one per line, each optionally followed by a name for the logs.")
    var apiTokenFile: String?

    @Flag(name: .customLong("metrics-open"), help: "Serve /metrics without a token even when tokens are required.")
    var metricsOpen = false

    @Option(
        name: .customLong("feed-secret-file"),
        help: "File whose first line is the shared secret feeders prove with the XEP-0114 component handshake.")
    var feedSecretFile: String?

    @Option(name: .customLong("tls-cert"), help: "PEM certificate chain for TLS on both listeners.")
    var tlsCertificate: String?

    @Option(name: .customLong("tls-key"), help: "PEM private key of --tls-cert.")
    var tlsKey: String?

    @Flag(
        name: .customLong("insecure-http"),
        help: "Allow listeners on non-loopback addresses without TLS (presence then travels unencrypted).")
    var insecureHTTP = false

    /// Checks the pieces a listener on `http` and `feed` needs, and reads every file once so that a bad one stops
    /// the start with its reason.
    func validate(http: HostAndPort, feed: HostAndPort) throws {
        guard (tlsCertificate == nil) == (tlsKey == nil) else {
            throw ValidationError("--tls-cert and --tls-key go together")
        }
        let encrypted = tlsCertificate != nil
        if !ServiceConfiguration.isLoopback(http.host) {
            guard apiTokenFile != nil else {
                throw ValidationError("the query API on \(http.host) needs --api-token-file: presence is personal data")
            }
            guard encrypted || insecureHTTP else {
                throw ValidationError(
                    "the query API on \(http.host) needs --tls-cert and --tls-key, or --insecure-http to serve it unencrypted"
                )
            }
        }
        if !ServiceConfiguration.isLoopback(feed.host) {
            guard feedSecretFile != nil else {
                throw ValidationError("the feed port on \(feed.host) needs --feed-secret-file")
            }
            guard encrypted || insecureHTTP else {
                throw ValidationError(
                    "the feed port on \(feed.host) needs --tls-cert and --tls-key, or --insecure-http to serve it unencrypted"
                )
            }
        }
        _ = try access()
        _ = try feedSecret()
        _ = try tls()
    }

    /// The API's tokens, read from their file; open without one.
    func access() throws -> APIAccess {
        guard let apiTokenFile else { return .open }
        return try Self.access(tokenFile: apiTokenFile, metricsOpen: metricsOpen)
    }

    static func access(tokenFile apiTokenFile: String, metricsOpen: Bool) throws -> APIAccess {
        let file = SecretFile(path: apiTokenFile, option: "--api-token-file")
        do {
            return try APIAccess(tokenFile: try file.contents(), metricsOpen: metricsOpen)
        } catch let error as APIAccess.TokenFileError {
            throw ValidationError("--api-token-file \(apiTokenFile), \(error)")
        }
    }

    /// The feed's shared secret, the first line of its file.
    func feedSecret() throws -> FeedSecret? {
        guard let feedSecretFile else { return nil }
        return try Self.feedSecret(file: feedSecretFile)
    }

    static func feedSecret(file feedSecretFile: String) throws -> FeedSecret {
        FeedSecret(Array(try SecretFile(path: feedSecretFile, option: "--feed-secret-file").firstLine().utf8))
    }

    /// TLS for the listeners, from the certificate and key files.
    func tls() throws -> TLSConfiguration? {
        guard let tlsCertificate, let tlsKey else { return nil }
        return try Self.tls(certificate: tlsCertificate, key: tlsKey)
    }

    static func tls(certificate tlsCertificate: String, key tlsKey: String) throws -> TLSConfiguration {
        do {
            return try ServiceConfiguration.serverTLS(certificateFile: tlsCertificate, privateKeyFile: tlsKey)
        } catch {
            throw ValidationError("--tls-cert \(tlsCertificate) and --tls-key \(tlsKey) cannot be used: \(error)")
        }
    }

    /// How SIGHUP reads each secret file again: with the same checks, and the same errors, as at start.
    var reloading: SecretReloading {
        var reloading = SecretReloading()
        if let file = apiTokenFile {
            let metricsOpen = self.metricsOpen
            reloading.access = { @Sendable () throws -> APIAccess in try Self.access(tokenFile: file, metricsOpen: metricsOpen) }
        }
        if let file = feedSecretFile {
            reloading.feedSecret = { @Sendable () throws -> FeedSecret in try Self.feedSecret(file: file) }
        }
        if let certificate = tlsCertificate, let key = tlsKey {
            reloading.tls = { @Sendable () throws -> TLSConfiguration in try Self.tls(certificate: certificate, key: key) }
        }
        return reloading
    }

    /// Warns about secret files others can read.
    func warnAboutSharedFiles(_ logger: Logger) {
        for (option, path) in [("--api-token-file", apiTokenFile), ("--feed-secret-file", feedSecretFile)] {
            guard let path, SecretFile(path: path, option: option).isShared else { continue }
            logger.warning("\(option) can be read by other users; chmod 600 it", metadata: ["file": "\(path)"])
        }
    }
}
