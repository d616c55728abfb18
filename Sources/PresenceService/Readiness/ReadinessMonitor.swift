import Logging
import PresenceSource
import PresenceStore
import ServiceLifecycle

/// Follows the replica's readiness: logs each change with its reason, tells the query API whether to refuse
/// (``ReadinessConfiguration/WhenNotReady/refuse``), and when the replica stops being ready ends its change
/// streams, so their clients reconnect through the balancer to a replica that is ready. When the source turns
/// live or stops being so, the open streams get each of their users' answers again (their `live` changed).
public final class ReadinessMonitor: Sendable {
    public let configuration: ReadinessConfiguration
    private let source: XMPPPresenceSource?
    private let ready: Locked<Bool>
    /// How often readiness is read again: the grace period is kept to this much.
    static let tick: Duration = .milliseconds(250)

    public init(configuration: ReadinessConfiguration, source: XMPPPresenceSource?) {
        self.configuration = configuration
        self.source = source
        ready = Locked(Readiness.of(source?.status, grace: configuration.grace).isReady)
    }

    /// Readiness now, with its reason.
    public var current: Readiness { Readiness.of(source?.status, grace: configuration.grace) }

    /// Whether queries are refused now: not ready, and told to refuse. Read per request: a lock and a flag.
    var isRefusing: Bool { configuration.whenNotReady == .refuse && !ready.withLock { $0 } }

    func run(hub: ChangeHub, logger: Logger, systemd: SystemdNotifier?) async {
        var last = current
        var wasLive = source?.isLive ?? true
        logger.info(last.isReady ? "ready" : "not ready", metadata: ["reason": "\(last.explanation)"])
        systemd?.notify("STATUS=\(last.statusLine)")
        while !Task.isCancelled {
            do { try await Task.sleep(for: Self.tick) } catch { return }
            // Every answer says whether the source is live: when that turns, the streams hear each answer again.
            let live = source?.isLive ?? true
            if live != wasLive { hub.republishAll() }
            wasLive = live
            let now = current
            ready.withLock { $0 = now.isReady }
            defer { last = now }
            guard now.isReady != last.isReady else { continue }
            systemd?.notify("STATUS=\(now.statusLine)")
            if now.isReady {
                logger.notice("ready", metadata: ["reason": "\(now.explanation)"])
            } else {
                logger.warning("not ready", metadata: ["reason": "\(now.explanation)"])
                if configuration.whenNotReady == .refuse { hub.closeAll() }
            }
        }
    }
}

/// The monitor as one of the service's lifecycle services.
struct ReadinessMonitorService: Service {
    let monitor: ReadinessMonitor
    let hub: ChangeHub
    let logger: Logger
    let systemd: SystemdNotifier?

    func run() async throws {
        await cancelWhenGracefulShutdown { await monitor.run(hub: hub, logger: logger, systemd: systemd) }
    }
}

extension Readiness {
    /// One line for `systemctl status`.
    var statusLine: String {
        (isReady ? "ready: " : "not ready: ") + explanation.split(separator: "\n").joined(separator: " ")
    }
}
