/// One flush, as ``TieredStorage`` reports it.
public struct FlushOutcome: Hashable, Sendable {
    public var users: Int
    public var bytes: Int
    public var duration: Duration
    /// The disk's error; the users stay dirty and are written at the next flush.
    public var error: String?
}
