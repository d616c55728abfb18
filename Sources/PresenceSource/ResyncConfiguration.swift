/// How often, and how fast, a source asks the server again about the members it watches.
///
/// The snapshot after each login makes the store agree with the server; after that, only the presences the
/// server broadcasts change it. A server can drop sessions without broadcasting anything: an ejabberd node that
/// crashes has its sessions removed from the session table by the other nodes, with no unavailable presence to
/// the contacts. Its members would show available forever. A resync probes members again, a bounded number per
/// second so the server never sees a burst, and reconciles their answers as the snapshot does.
///
/// By default it asks only the members the watcher heard available (and not confirmed offline since): a status
/// the server can forget without a word is an available one (a member shown offline who comes online sends an
/// available presence, which the watcher hears). That makes the bound on how long a forgotten status lives depend
/// on how many people are online, not on the roster's size: ``stalenessBound(askedMembers:)``.
public struct ResyncConfiguration: Hashable, Sendable {
    /// Which members a resync asks.
    public enum Members: String, Hashable, Sendable, CaseIterable {
        /// Members the watcher heard available (any show: chat, away, dnd, xa) and not confirmed offline since:
        /// the statuses a server can forget silently.
        case available
        /// Every roster member, offline ones too: also heals an available presence the watcher never heard.
        case all
    }

    /// The wait between the end of one resync and the start of the next.
    public var interval: Duration
    /// Most members probed per second.
    public var membersPerSecond: Int
    /// Which members each resync asks.
    public var members: Members

    public static let defaultInterval: Duration = .seconds(30)
    public static let defaultMembersPerSecond = 100
    public static let defaultMembers: Members = .available

    /// The default: shown-available members every 30 s, 100 a second at most.
    public static let `default` = ResyncConfiguration()

    public init(
        interval: Duration = defaultInterval, membersPerSecond: Int = defaultMembersPerSecond,
        members: Members = defaultMembers
    ) {
        self.interval = interval
        self.membersPerSecond = max(1, membersPerSecond)
        self.members = members
    }

    /// Members in one batch: a batch goes out every ``batchInterval``.
    var batchSize: Int { max(1, membersPerSecond / 10) }

    /// The pause between batches: a tenth of a second, longer when fewer than ten members a second are asked.
    var batchInterval: Duration { .seconds(Double(batchSize) / Double(membersPerSecond)) }

    /// The longest a status the server forgot can stay shown, when each resync asks `askedMembers` members,
    /// besides the server's answers: a member asked at the start of one pass, forgotten just after, and asked at
    /// the end of the next (members are asked in the order of their JIDs, but people coming online ahead of them
    /// move them) waits the rest of that pass, the interval, and the next pass: `interval + 2 × askedMembers /
    /// membersPerSecond`. With the defaults, 1,000 people all online give 50 s, 10,000 people of whom 5% are
    /// online 40 s, and 10,000 all online 230 s.
    public func stalenessBound(askedMembers: Int) -> Duration {
        interval + .seconds(2 * Double(askedMembers) / Double(membersPerSecond))
    }
}
