import NIOSSL
import PresenceIngest
import PresenceModel
import PresenceStore
import XMPPStream

/// Everything `presence serve` can be told, each limit with a default.
public struct ServiceConfiguration: Sendable {
    /// Where feeders connect (TCP, one stanza stream per connection).
    public var feedHost: String
    public var feedPort: Int
    /// Where the query API listens (HTTP).
    public var httpHost: String
    public var httpPort: Int
    /// Most feeder connections at once; one more is told `policy-violation` and closed.
    public var maxConnections: Int
    /// Threads that decode and apply what feeders send, shared by all of them (see ``ApplyPool``).
    public var applyThreads: Int
    /// Event loops (threads) that run the feed port's and the query API's connections, change streams included.
    public var eventLoops: Int
    /// A feeder silent this long is closed.
    public var idleTimeout: Duration
    /// How often memory-pressure sources are checked.
    public var pressureInterval: Duration
    public var stream: XMPPStreamParser.Configuration
    public var decoder: PresenceDecoder
    /// How queries refill what the storage lost from the XMPP source: probe timeout and budget.
    public var lookup: PresenceLookup.Configuration
    /// The change streams' limits.
    public var events: EventStreamConfiguration
    /// The query API's limits: batch size, connections, header deadline.
    public var http: HTTPLimits
    /// Who may read the query API (bearer tokens); open by default.
    public var access: APIAccess
    /// The shared secret feeders prove with the XEP-0114 component handshake (`--feed-secret-file`); without it,
    /// feeders are not asked for one (loopback only, unless explicitly allowed).
    public var feedSecret: FeedSecret?
    /// TLS for both listeners (the query API and the feed port); plain TCP when nil.
    public var tls: TLSConfiguration?
    /// How SIGHUP reads the token file, the feed secret and the TLS certificate and key again.
    public var secretReloading = SecretReloading()
    /// When the service counts as ready (`GET /readyz`) and what queries get while it is not.
    public var readiness: ReadinessConfiguration

    public static let defaultMaxConnections = 1024
    /// One applying thread per core.
    public static var defaultApplyThreads: Int { ApplyPool.defaultThreadCount }
    /// One event loop per core. A replica answers queries while it writes change streams and feeders feed it: on
    /// two cores, two loops answered 9 to 17 % more queries than one beside 200 streams and 2,000 changes a second,
    /// with every event delivered as fast (Documentation/Benchmarks.md, the mixed workload). One loop writes a stream's
    /// event for less CPU (each loop holding a watcher's stream is a thread woken for the change), which a replica
    /// that only streams can take with `--event-loops`. Big reads from feeders are parsed on Swift's global pool and
    /// applied by ``applyThreads``.
    public static var defaultEventLoops: Int { ApplyPool.defaultThreadCount }
    public static let defaultIdleTimeout: Duration = .seconds(300)
    public static let defaultPressureInterval: Duration = .seconds(1)

    public init(
        feedHost: String = "127.0.0.1", feedPort: Int = 5270, httpHost: String = "127.0.0.1", httpPort: Int = 8080,
        maxConnections: Int = defaultMaxConnections, applyThreads: Int = defaultApplyThreads,
        eventLoops: Int = defaultEventLoops,
        idleTimeout: Duration = defaultIdleTimeout,
        pressureInterval: Duration = defaultPressureInterval, stream: XMPPStreamParser.Configuration = .init(),
        decoder: PresenceDecoder = .init(), lookup: PresenceLookup.Configuration = .init(),
        events: EventStreamConfiguration = .init(), http: HTTPLimits = .init(), access: APIAccess = .open,
        tls: TLSConfiguration? = nil,
        feedSecret: FeedSecret? = nil, readiness: ReadinessConfiguration = .init()
    ) {
        self.feedHost = feedHost
        self.feedPort = feedPort
        self.httpHost = httpHost
        self.httpPort = httpPort
        self.maxConnections = max(maxConnections, 1)
        self.applyThreads = max(applyThreads, 1)
        self.eventLoops = max(eventLoops, 1)
        self.idleTimeout = idleTimeout
        self.pressureInterval = pressureInterval
        self.stream = stream
        self.decoder = decoder
        self.lookup = lookup
        self.events = events
        self.http = http
        self.access = access
        self.tls = tls
        self.feedSecret = feedSecret
        self.readiness = readiness
    }

    /// A server's TLS from a PEM certificate chain and its PEM private key (`--tls-cert`, `--tls-key`); TLS 1.2 at
    /// least.
    public static func serverTLS(certificateFile: String, privateKeyFile: String) throws -> TLSConfiguration {
        let chain = try NIOSSLCertificate.fromPEMFile(certificateFile).map { NIOSSLCertificateSource.certificate($0) }
        let key = try NIOSSLPrivateKey(file: privateKeyFile, format: .pem)
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
        tls.minimumTLSVersion = .tlsv12
        return tls
    }

    /// Whether a host is a loopback address (127.0.0.0/8, ::1, localhost): the only ones served without an
    /// explicit flag.
    public static func isLoopback(_ host: String) -> Bool {
        LoopbackHost.contains(host)
    }
}
