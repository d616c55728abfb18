/// The query API's limits against clients that ask too much or too slowly, each with a default and a
/// `presence serve` flag.
public struct HTTPLimits: Hashable, Sendable {
    /// Most `jid` parameters in one `GET /v1/presence?jid=…` (`--http-max-batch`); more is answered 400. One
    /// batch of 1,000 is about 300 KB of JSON.
    public var maxBatchJIDs: Int
    /// Most HTTP connections at once, change streams included (`--http-max-connections`): over it the service
    /// stops accepting (Hummingbird's `MaximumAvailableConnections`) and one more waits in the kernel's backlog
    /// until a connection closes. The default leaves room for `--events-max-streams`' 10,000 streams and 2,288
    /// more.
    public var maxConnections: Int
    /// How long a client may take to send a request's head, from the connection's start or the end of the
    /// previous response (`--http-header-timeout`): a client that trickles its headers, or holds a connection
    /// without asking anything, is closed.
    public var headerTimeout: Duration

    public static let defaultMaxBatchJIDs = 1_000
    public static let defaultMaxConnections = 12_288
    public static let defaultHeaderTimeout: Duration = .seconds(30)

    public init(
        maxBatchJIDs: Int = defaultMaxBatchJIDs, maxConnections: Int = defaultMaxConnections,
        headerTimeout: Duration = defaultHeaderTimeout
    ) {
        self.maxBatchJIDs = max(maxBatchJIDs, 1)
        self.maxConnections = max(maxConnections, 1)
        self.headerTimeout = headerTimeout
    }
}
