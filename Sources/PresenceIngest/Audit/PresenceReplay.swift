import PresencePressure
import PresenceStore
import XMPPStream

/// Replays a presence stream into a storage through an ``IngestSession`` and, beside it, into the truth (a plain
/// map that never evicts), delivering memory pressure from the given sources as updates are applied.
///
/// The storage and the truth see every update with the same time, so any difference the audit finds is the
/// storage's doing. Feed bytes as they arrive; each stanza is applied as soon as it is complete.
public final class PresenceReplay {
    public let session: IngestSession
    public let sources: [any MemoryPressureSource]
    /// What a store that never forgets holds after the same updates.
    public private(set) var truth: [BareJID: UserPresence] = [:]
    /// Every pressure event delivered, with what it cost the storage.
    public private(set) var pressureResponses: [PressureResponse] = []
    private var applied = 0

    /// - Parameter clock: the time given to updates without a delay stamp; wall-clock time by default.
    public init(
        storage: any MemoryStorage, sources: [any MemoryPressureSource] = [],
        configuration: XMPPStreamParser.Configuration = .init(), decoder: PresenceDecoder = .init(),
        clock: @escaping @Sendable () -> PresenceTime = PresenceTime.now
    ) {
        session = IngestSession(storage: storage, configuration: configuration, decoder: decoder, clock: clock)
        self.sources = sources
        session.onApplied = { [unowned self] update, time in record(update, at: time) }
    }

    public var storage: any MemoryStorage { session.storage }
    public var statistics: IngestStatistics { session.statistics }
    public var error: XMPPStreamError? { session.error }

    public func feed(_ bytes: UnsafeRawBufferPointer) throws(XMPPStreamError) { try session.feed(bytes) }
    public func feed(_ bytes: some Collection<UInt8>) throws(XMPPStreamError) { try session.feed(bytes) }
    public func finish() throws(XMPPStreamError) { try session.finish() }

    /// Compares the storage with the truth.
    public func audit() -> AuditReport { PresenceAudit.audit(storage, truth: truth) }

    /// The probes refilling the storage's losses would cost (see ``RefillCost``). Changes the storage: call it
    /// after ``audit()``.
    public func measureRefill() -> RefillCost { RefillCost.measure(readingEveryoneIn: storage, truth: truth) }

    private func record(_ update: PresenceUpdate, at time: PresenceTime) {
        truth[update.from.bare, default: UserPresence()].apply(update, receivedAt: time)
        applied += 1
        for source in sources {
            if let level = source.check(.appliedUpdates(applied)) { pressureResponses.append(storage.handle(level)) }
        }
    }
}
