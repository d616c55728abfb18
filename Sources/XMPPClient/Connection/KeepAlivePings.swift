import Synchronization

/// How many keep-alive pings a session has sent: what watching a connection for silence costs the server.
/// Readable from any task while the session runs (a source's statistics, a metric).
public final class KeepAlivePings: Sendable {
    private let sent = Atomic<Int>(0)

    public init() {}

    /// Pings sent so far.
    public var count: Int { sent.load(ordering: .relaxed) }

    func recordSent() { sent.add(1, ordering: .relaxed) }
}
