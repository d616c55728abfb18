import Logging
import ServiceLifecycle
import UnixSignals

/// SIGHUP reads the token file, the feed secret and the TLS certificate and key again. Each that reads and checks
/// as valid replaces the old one for new requests and connections; each that does not is refused with a log line
/// saying why, and the old one stays in force. Open connections are never dropped.
struct SecretReloadService: Service {
    let secrets: ServiceSecrets
    let reloading: SecretReloading
    let metrics: ServiceMetrics
    let logger: Logger

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        await cancelWhenGracefulShutdown {
            for await _ in signals { reload() }
        }
    }

    /// Reads every secret again.
    func reload() {
        func attempt(_ what: String, metric: ReloadableSecret, _ body: () throws -> String) {
            do {
                let detail = try body()
                metrics.recordSecretReload(metric, accepted: true)
                logger.notice("reloaded \(what)", metadata: ["detail": "\(detail)"])
            } catch {
                metrics.recordSecretReload(metric, accepted: false)
                logger.error("refused the new \(what); the old one stays in force", metadata: ["reason": "\(error)"])
            }
        }
        if let access = reloading.access {
            attempt("API tokens", metric: .apiTokens) {
                let new = try access()
                try secrets.replace(access: new)
                return "\(new.tokenCount) tokens"
            }
        }
        if let feedSecret = reloading.feedSecret {
            attempt("feed secret", metric: .feedSecret) {
                secrets.replace(feedSecret: try feedSecret())
                return "new feeders prove the new secret"
            }
        }
        if let tls = reloading.tls {
            attempt("TLS certificate and key", metric: .tls) {
                try secrets.replace(tls: try tls())
                return "new connections get the new certificate"
            }
        }
    }
}
