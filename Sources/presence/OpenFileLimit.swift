import Glibc
import Logging

/// The process's open-file limit (`RLIMIT_NOFILE`) held against what `presence serve`'s connection limits need:
/// every feeder, HTTP client and change stream is a file descriptor.
///
/// A login shell's soft limit is commonly 1,024 while its hard limit is far higher (systemd's default hard limit is
/// 524,288), so a service started by hand would refuse connections with `EMFILE` long before
/// `--http-max-connections`. `presence serve` therefore raises its soft limit to the hard limit (which only root
/// may raise) when the soft one is below what its limits need, and says so. When even the hard limit is short, it warns at startup
/// with the figures, instead of failing connections later. The shipped systemd unit sets both limits
/// (`LimitNOFILE=65536`), which is then already enough.
struct OpenFileLimit {
    var soft: rlim_t
    var hard: rlim_t

    /// Descriptors beyond the connections themselves: the listening sockets, the XMPP connection, the disk tier's
    /// files, the event loops' own descriptors and the logs.
    static let reserve = 64

    /// `RLIM_INFINITY`: all bits set on Linux (the C macro does not import into Swift).
    static let unlimited = rlim_t.max

    /// The descriptors the connection limits need: one per feeder and per HTTP connection, plus ``reserve``.
    static func needed(feedConnections: Int, httpConnections: Int) -> rlim_t {
        // Each limit is at least 1 and may be set absurdly high; a billion descriptors is past any kernel's.
        let most = 1 << 30
        return rlim_t(min(feedConnections, most)) + rlim_t(min(httpConnections, most)) + rlim_t(reserve)
    }

    /// The process's limits now; nil when the kernel does not say.
    static func current() -> OpenFileLimit? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        return OpenFileLimit(soft: limit.rlim_cur, hard: limit.rlim_max)
    }

    /// When the soft limit is below `needed`, raises it to the hard limit (every descriptor the process may have:
    /// the event loops and the disk tier take some too, more on a machine of many cores) and logs what it did; warns
    /// when even the hard limit is below `needed`. Returns the limits in force afterwards.
    @discardableResult
    static func ensure(_ needed: rlim_t, logger: Logger) -> OpenFileLimit? {
        guard var limits = current() else { return nil }
        let unlimited = limits.hard == Self.unlimited
        // An unlimited hard limit still meets the kernel's own ceiling (fs.nr_open): ask for what is needed.
        let target = unlimited ? needed : limits.hard
        if limits.soft != Self.unlimited && limits.soft < needed && target > limits.soft {
            var raised = rlimit(rlim_cur: target, rlim_max: limits.hard)
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 {
                logger.info(
                    "raised the open-file limit to hold the connection limits",
                    metadata: ["from": "\(limits.soft)", "to": "\(target)", "needed": "\(needed)"])
                limits.soft = target
            } else {
                let error = errno
                logger.warning(
                    "could not raise the open-file limit",
                    metadata: ["soft": "\(limits.soft)", "needed": "\(needed)", "errno": "\(error)"])
            }
        }
        if !unlimited && limits.hard < needed {
            logger.warning(
                "the open-file limit is below what the connection limits need: connections past it are refused",
                metadata: [
                    "limit": "\(limits.hard)", "needed": "\(needed)",
                    "remedy":
                        "raise LimitNOFILE (systemd) or the hard limit, or lower --http-max-connections or --max-connections",
                ])
        }
        return limits
    }
}
