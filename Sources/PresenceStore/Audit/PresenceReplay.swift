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
    /// What a store that never forgets holds after the same updates.
    public private(set) var truth: [BareJID: UserPresence] = [:]
    /// Every pressure event delivered, with what it cost the storage.
    public private(set) var pressureResponses: [PressureResponse] = []
    private let clock: @Sendable () -> PresenceTime

    /// - Parameter clock: the time given to updates without a delay stamp; wall-clock time by default.
    public init(storage: any MemoryStorage, sources: [any MemoryPressureSource] = [],
                configuration: XMPPStreamParser.Configuration = .init(), decoder: PresenceDecoder = .init(),
                clock: @escaping @Sendable () -> PresenceTime = PresenceTime.now) {
        self.storage = storage
        self.sources = sources
        self.clock = clock
        feed = PresenceFeed(configuration: configuration, decoder: decoder)
    }

    public var statistics: IngestStatistics { feed.statistics }
    public var error: XMPPStreamError? { feed.error }

    public mutating func feed(_ bytes: UnsafeRawBufferPointer) throws(XMPPStreamError) {
        var truth = self.truth
        var responses = self.pressureResponses
        self.truth = [:]
        defer {
            self.truth = truth
            self.pressureResponses = responses
        }
        let (storage, sources, clock) = (self.storage, self.sources, self.clock)
        var applied = feed.statistics.presenceUpdates
        try feed.feed(bytes) { update in
            PresenceReplay.apply(update, storage, sources, clock, &truth, &responses, &applied)
        }
    }

    public mutating func finish() throws(XMPPStreamError) {
        var truth = self.truth
        var responses = self.pressureResponses
        self.truth = [:]
        defer {
            self.truth = truth
            self.pressureResponses = responses
        }
        let (storage, sources, clock) = (self.storage, self.sources, self.clock)
        var applied = feed.statistics.presenceUpdates
        try feed.finish { update in
            PresenceReplay.apply(update, storage, sources, clock, &truth, &responses, &applied)
        }
    }

    /// Compares the storage with the truth.
    public func audit() -> AuditReport { PresenceAudit.audit(storage, truth: truth) }

    private static func apply(
        _ update: PresenceUpdate, _ storage: any MemoryStorage, _ sources: [any MemoryPressureSource],
        _ clock: @Sendable () -> PresenceTime, _ truth: inout [BareJID: UserPresence],
        _ responses: inout [PressureResponse], _ applied: inout Int
    ) {
        let now = clock()
        truth[update.from.bare, default: UserPresence()].apply(update, receivedAt: now)
        storage.apply(update, receivedAt: now)
        applied += 1
        for source in sources {
            if let level = source.check(appliedUpdates: applied) { responses.append(storage.handle(level)) }
        }
    }
}
