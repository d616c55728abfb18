import PresencePressure
import PresenceStore
import XMPPStream

/// Replays a presence stream into a storage through an ``IngestSession`` and, where the audit needs one, into the
/// truth (see ``ReplayTruth``), delivering memory pressure from the given sources as updates are applied.
///
/// The storage and a separate truth see every update with the same time, so any difference the audit finds is the
/// storage's doing. Feed bytes as they arrive. A replay that records nothing per update (no separate truth, no
/// pressure) applies on a second thread while it parses; ``finish()`` and a `feed` that throws return once all
/// is applied, so the storage is complete whenever it is read after them.
public final class PresenceReplay {
    public let session: IngestSession
    public let sources: [any MemoryPressureSource]
    /// Where the truth is kept.
    public let truthKeeping: ReplayTruth
    /// The separate truth, when ``truthKeeping`` is ``ReplayTruth/separate``.
    private let separateTruth: DictionaryMemoryStorage?
    /// Every pressure event delivered, with what it cost the storage.
    public private(set) var pressureResponses: [PressureResponse] = []
    private var applied = 0

    /// - Parameters:
    ///   - truth: where to keep the truth; ``ReplayTruth/separate`` (any storage can be audited) by default.
    ///   - clock: the time given to updates without a delay stamp; wall-clock time by default.
    public init(
        storage: any MemoryStorage, sources: [any MemoryPressureSource] = [], truth: ReplayTruth = .separate,
        configuration: XMPPStreamParser.Configuration = .init(), decoder: PresenceDecoder = .init(),
        clock: @escaping @Sendable () -> PresenceTime = PresenceTime.now
    ) {
        // Nothing to do per update without a separate truth or pressure sources: the session then calls nothing,
        // and applies on a thread of its own while this one parses. With them, every update is recorded here in order,
        // on this thread.
        let recordsUpdates = truth == .separate || !sources.isEmpty
        session = IngestSession(
            storage: storage, configuration: configuration, decoder: decoder, clock: clock,
            applyingOn: recordsUpdates ? nil : ApplyPool(threads: 1))
        self.sources = sources
        truthKeeping = truth
        separateTruth = truth == .separate ? DictionaryMemoryStorage(stripes: 1) : nil
        if recordsUpdates {
            session.onApplied = { [unowned self] update, time in record(update, at: time) }
        }
    }

    public var storage: any MemoryStorage { session.storage }
    public var statistics: IngestStatistics { session.statistics }
    public var error: XMPPStreamError? { session.error }

    /// What a store that never forgets holds after the same updates; nil without a truth.
    public var truth: (any MemoryStorage)? {
        switch truthKeeping {
        case .none: nil
        case .storage: storage
        case .separate: separateTruth
        }
    }

    public func feed(_ bytes: UnsafeRawBufferPointer) throws(XMPPStreamError) { try session.feed(bytes) }
    public func feed(_ bytes: some Collection<UInt8>) throws(XMPPStreamError) { try session.feed(bytes) }
    public func finish() throws(XMPPStreamError) { try session.finish() }

    /// Compares the storage with the truth, once everything fed is applied; nil without a truth.
    public func audit() -> AuditReport? {
        session.waitUntilApplied()
        return switch truthKeeping {
        case .none: nil
        case .storage: PresenceAudit.auditOfTruth(storage)
        case .separate: PresenceAudit.audit(storage, truth: separateTruth!)
        }
    }

    /// The probes refilling the storage's losses would cost (see ``RefillCost``); nil without a truth. Changes the
    /// storage: call it after ``audit()``.
    public func measureRefill() -> RefillCost? {
        session.waitUntilApplied()
        return switch truthKeeping {
        case .none: nil
        case .storage: RefillCost(users: storage.count, probes: 0)
        case .separate: RefillCost.measure(readingEveryoneIn: storage, truth: separateTruth!)
        }
    }

    private func record(_ update: PresenceUpdate, at time: PresenceTime) {
        separateTruth?.apply(update, receivedAt: time)
        applied += 1
        for source in sources {
            if let level = source.check(.appliedUpdates(applied)) { pressureResponses.append(storage.handle(level)) }
        }
    }
}
