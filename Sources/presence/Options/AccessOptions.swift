import ArgumentParser
import NIOSSL
import PresenceService

/// Who may use the service: API tokens, the feed's shared secret, TLS for both listeners, and what `--allow-remote`
/// requires of them.
///
/// On loopback everything is open by default. A listener on any other address must authenticate and
/// encrypt: the query API needs `--api-token-file`, the feed port `--feed-secret-file`, and both TLS
/// (`--tls-cert` and `--tls-key`) unless `--insecure-http` says plain TCP is meant. A missing piece is a usage
/// error (exit 64) that names it.
struct AccessOptions: ParsableArguments, SettingFlags {
    @Option(name: SettingKeys.apiTokenFile.flag, help: SettingKeys.apiTokenFile.help)
    var apiTokenFile: String?

    @Flag(name: SettingKeys.metricsOpen.flag, inversion: .prefixedNo, help: SettingKeys.metricsOpen.help)
    var metricsOpen: Bool?

    @Option(name: SettingKeys.feedSecretFile.flag, help: SettingKeys.feedSecretFile.help)
    var feedSecretFile: String?

    @Option(name: SettingKeys.tlsCertificate.flag, help: SettingKeys.tlsCertificate.help)
    var tlsCertificate: String?

    @Option(name: SettingKeys.tlsKey.flag, help: SettingKeys.tlsKey.help)
    var tlsKey: String?

    @Flag(name: SettingKeys.insecureHTTP.flag, inversion: .prefixedNo, help: SettingKeys.insecureHTTP.help)
    var insecureHTTP: Bool?

    func record(into flags: inout FlagLayer) {
        flags.record(SettingKeys.apiTokenFile, apiTokenFile)
        flags.record(SettingKeys.metricsOpen, metricsOpen)
        flags.record(SettingKeys.feedSecretFile, feedSecretFile)
        flags.record(SettingKeys.tlsCertificate, tlsCertificate)
        flags.record(SettingKeys.tlsKey, tlsKey)
        flags.record(SettingKeys.insecureHTTP, insecureHTTP)
    }
}

/// Who may use the service, as in force: the secret files' paths and what `--allow-remote` requires of them.
struct ServiceAccessSettings {
    let apiTokenFile: String?
    let metricsOpen: Bool
    let feedSecretFile: String?
    let tlsCertificate: String?
    let tlsKey: String?
    let insecureHTTP: Bool

    /// Reads the settings and checks the pieces a listener on `http` and `feed` needs.
    init(_ settings: Settings, http: HostAndPort, feed: HostAndPort) throws {
        apiTokenFile = try settings(SettingKeys.apiTokenFile)
        metricsOpen = try settings(SettingKeys.metricsOpen)
        feedSecretFile = try settings(SettingKeys.feedSecretFile)
        tlsCertificate = try settings(SettingKeys.tlsCertificate)
        tlsKey = try settings(SettingKeys.tlsKey)
        insecureHTTP = try settings(SettingKeys.insecureHTTP)
        try validate(http: http, feed: feed)
    }

    /// Checks the pieces a listener on `http` and `feed` needs, and reads every file once so that a bad one stops
    /// the start with its reason.
    private func validate(http: HostAndPort, feed: HostAndPort) throws {
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
            reloading.access = { @Sendable () throws -> APIAccess in
                try Self.access(tokenFile: file, metricsOpen: metricsOpen)
            }
        }
        if let file = feedSecretFile {
            reloading.feedSecret = { @Sendable () throws -> FeedSecret in try Self.feedSecret(file: file) }
        }
        if let certificate = tlsCertificate, let key = tlsKey {
            reloading.tls = { @Sendable () throws -> TLSConfiguration in
                try Self.tls(certificate: certificate, key: key)
            }
        }
        return reloading
    }
}
