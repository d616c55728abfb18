import XMPPStream

/// Replays a presence stream into a storage and, beside it, into the truth (a plain map that never evicts),
/// delivering memory pressure from the given sources as updates are applied.
///
/// The storage and the truth see every update with the same time, so any difference the audit finds is the
/// storage's doing. Feed bytes as they arrive; each stanza is applied as soon as it is complete.
public struct PresenceReplay: ~Copyable {
    public let storage: any MemoryStorage
    public let sources: [any MemoryPressureSource]
    private var feed: PresenceFeed
    private let state: State

    /// What the replay has built so far; a class so that the feed's callback can add to it.
    private final class State {
        var truth: [BareJID: UserPresence] = [:]
        var pressureResponses: [PressureResponse] = []
        var applied = 0
        let storage: any MemoryStorage
        let sources: [any MemoryPressureSource]
        let clock: @Sendable () -> PresenceTime

        init(storage: any MemoryStorage, sources: [any MemoryPressureSource], clock: @escaping @Sendable () -> PresenceTime) {
            self.storage = storage
            self.sources = sources
            self.clock = clock
        }

        func apply(_ update: PresenceUpdate) {
            let now = clock()
            truth[update.from.bare, default: UserPresence()].apply(update, receivedAt: now)
            storage.apply(update, receivedAt: now)
            applied += 1
            for source in sources {
                if let level = source.check(appliedUpdates: applied) { pressureResponses.append(storage.handle(level)) }
            }
        }
    }

    /// - Parameter clock: the time given to updates without a delay stamp; wall-clock time by default.
    public init(storage: any MemoryStorage, sources: [any MemoryPressureSource] = [],
                configuration: XMPPStreamParser.Configuration = .init(), decoder: PresenceDecoder = .init(),
                clock: @escaping @Sendable () -> PresenceTime = PresenceTime.now) {
        self.storage = storage
        self.sources = sources
        feed = PresenceFeed(configuration: configuration, decoder: decoder)
        state = State(storage: storage, sources: sources, clock: clock)
    }

    public var statistics: IngestStatistics { feed.statistics }
    public var error: XMPPStreamError? { feed.error }
    /// What a store that never forgets holds after the same updates.
    public var truth: [BareJID: UserPresence] { state.truth }
    /// Every pressure event delivered, with what it cost the storage.
    public var pressureResponses: [PressureResponse] { state.pressureResponses }

    public mutating func feed(_ bytes: UnsafeRawBufferPointer) throws(XMPPStreamError) {
        let state = self.state
        try feed.feed(bytes) { state.apply($0) }
    }

    public mutating func finish() throws(XMPPStreamError) {
        let state = self.state
        try feed.finish { state.apply($0) }
    }

    /// Compares the storage with the truth.
    public func audit() -> AuditReport { PresenceAudit.audit(storage, truth: state.truth) }
}
