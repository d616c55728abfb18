/// How often, and how fast, a source asks the server again about every member it watches.
///
/// The snapshot after each login makes the store agree with the server; after that, only the presences the
/// server broadcasts change it. A server can drop sessions without broadcasting anything: an ejabberd node that
/// crashes has its sessions removed from the session table by the other nodes, with no unavailable presence to
/// the contacts. Its members would show available forever. A resync probes every member again, a bounded number
/// per second so the server never sees a burst, and reconciles their answers as the snapshot does.
public struct ResyncConfiguration: Hashable, Sendable {
    /// The wait between the end of one resync and the start of the next.
    public var interval: Duration
    /// Most members probed per second.
    public var membersPerSecond: Int

    public static let defaultMembersPerSecond = 100

    public init(interval: Duration, membersPerSecond: Int = defaultMembersPerSecond) {
        self.interval = interval
        self.membersPerSecond = max(1, membersPerSecond)
    }

    /// Members in one batch: a batch goes out every ``batchInterval``.
    var batchSize: Int { max(1, membersPerSecond / 10) }

    /// The pause between batches: a tenth of a second, longer when fewer than ten members a second are asked.
    var batchInterval: Duration { .seconds(Double(batchSize) / Double(membersPerSecond)) }
}
