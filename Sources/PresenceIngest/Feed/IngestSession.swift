import PresenceStore
import XMPPStream

/// One incoming stanza stream applied to a storage: bytes → parser → decoder → storage, each presence applied
/// as soon as its stanza is complete, also when the bytes trickle in.
///
/// Every source drives one: the service's feed listener (one per feeder connection), the command line's file
/// or standard-input replay, and a client connection to an XMPP server. A stream error ends the session;
/// everything applied before it stays applied, and ``statistics`` still counts it.
///
/// Not thread-safe: a session belongs to the task that reads its stream.
public final class IngestSession {
    public let storage: any MemoryStorage
    private var feed: PresenceFeed
    private let clock: @Sendable () -> PresenceTime
    /// Told every parser event before it is decoded: the stream header, every stanza (presence or not) and the
    /// end of the stream. A client connection reads its stream features, IQs and stream errors here.
    public var onEvent: ((XMPPStreamEvent) -> Void)?
    /// Asked about every stanza after ``onEvent`` and before it is decoded: a stanza it refuses is counted as read
    /// and neither decoded nor applied. The feed port's component handshake refuses everything until the feeder
    /// proved its secret.
    public var admits: ((Stanza) -> Bool)?
    /// Told every update after it was applied to the storage, with the time it was applied at. Not called by a
    /// session that applies in the background.
    public var onApplied: ((PresenceUpdate, PresenceTime) -> Void)?
    /// Told every update just before it is applied to the storage, with the time it will be applied at: a
    /// reader that also writes the storage from another task learns of an update before the storage shows it.
    /// Not called by a session that applies in the background.
    public var willApply: ((PresenceUpdate, PresenceTime) -> Void)?
    /// Decodes and applies on a thread of its own, when the session was made to.
    private let background: BackgroundApplier?

    /// - Parameters:
    ///   - clock: the time given to updates without a delay stamp; wall-clock time by default.
    ///   - pool: decode stanzas and apply their updates on this pool's threads, in stream order, while the
    ///     caller parses on (see ``ApplyPool``). ``feed(_:)-(UnsafeRawBufferPointer)`` then returns once its
    ///     stanzas are parsed and queued, and they are applied shortly after; ``finish()``,
    ///     ``waitUntilApplied()``, ``applied()`` and a `feed` that throws return only once everything before them
    ///     is applied. ``statistics`` counts outcomes (updates, ignored, rejected) as stanzas are applied.
    ///     ``onApplied`` is not called and ``receive(_:)`` is not for such a session. Nil: everything is applied
    ///     on the caller's thread before `feed` returns.
    ///   - onBatchApplied: with a pool, told on a pool thread, right after each batch is applied, what it
    ///     counted (stanzas and outcomes): a service's counters follow what queries can see.
    public init(
        storage: any MemoryStorage, configuration: XMPPStreamParser.Configuration = .init(),
        decoder: PresenceDecoder = .init(), clock: @escaping @Sendable () -> PresenceTime = PresenceTime.now,
        applyingOn pool: ApplyPool? = nil, onBatchApplied: (@Sendable (IngestStatistics) -> Void)? = nil
    ) {
        self.storage = storage
        feed = PresenceFeed(configuration: configuration, decoder: decoder)
        self.clock = clock
        background = pool.map {
            BackgroundApplier(pool: $0, storage: storage, decoder: decoder, onBatchApplied: onBatchApplied)
        }
    }

    /// What the stream contained so far, by outcome.
    public var statistics: IngestStatistics {
        guard let background else { return feed.statistics }
        var statistics = feed.statistics
        statistics.addOutcomes(of: background.outcomes)
        return statistics
    }
    /// The error that ended the stream, if any.
    public var error: XMPPStreamError? { feed.error }
    /// The stream header, once read.
    public var header: StreamHeader? { feed.header }

    /// Whether everything fed so far is applied: always, unless the session applies on a pool and some of it is
    /// still queued there or being applied.
    public var isApplied: Bool { background?.isIdle ?? true }

    /// Applies the next chunk of the stream.
    ///
    /// - Parameter applyingHere: with a pool, apply what these bytes complete on the calling thread rather than on
    ///   the pool, however many stanzas that is: for a small read on a thread that must not wait for the pool (an
    ///   event loop). Called while ``isApplied``, nothing of the session's is in the pool, so nothing here waits
    ///   for it. Otherwise the stanzas queue behind what is there, as without the flag: the stream's order comes
    ///   first.
    public func feed(_ bytes: UnsafeRawBufferPointer, applyingHere: Bool = false) throws(XMPPStreamError) {
        do {
            if let background {
                background.applyingHere = applyingHere
                defer {
                    background.handOver()
                    background.applyingHere = false
                    background.recycleApplied { feed.recycle($0) }
                }
                try feed.parse(bytes, onEvent: { onEvent?($0) }) { stanza in
                    if admits?(stanza) ?? true { background.enqueue(stanza, receivedAt: clock()) }
                }
            } else {
                try feed.feed(bytes, onEvent: { onEvent?($0) }, admits: { admits?($0) ?? true }, apply: apply)
            }
        } catch {
            waitUntilApplied()
            throw error
        }
    }

    /// Applies the next chunk of the stream (`applyingHere`: see ``feed(_:applyingHere:)-(UnsafeRawBufferPointer,_)``).
    public func feed(_ bytes: some Collection<UInt8>, applyingHere: Bool = false) throws(XMPPStreamError) {
        let array = Array(bytes)
        try array.withUnsafeBytes { buffer in
            Result { () throws(XMPPStreamError) in try feed(buffer, applyingHere: applyingHere) }
        }.get()
    }

    /// The stream's input ended: a stream cut inside a stanza is an error (everything before it stays applied).
    public func finish() throws(XMPPStreamError) {
        defer { waitUntilApplied() }
        if let background {
            try feed.finishParsing(onEvent: { onEvent?($0) }) { stanza in
                if admits?(stanza) ?? true { background.enqueue(stanza, receivedAt: clock()) }
            }
        } else {
            try feed.finish(onEvent: { onEvent?($0) }, admits: { admits?($0) ?? true }, apply: apply)
        }
    }

    /// Returns once every update decoded so far is applied to the storage (at once unless the session applies in
    /// the background).
    public func waitUntilApplied() {
        background?.waitUntilApplied()
    }

    /// Suspends, without blocking a thread, until every update fed so far is applied to the storage.
    public func applied() async {
        await background?.applied()
    }

    /// Suspends, without blocking a thread, until the session's lane in its pool has room for a read's batches: a
    /// task feeding a live stream calls it before each `feed` of a few KiB, so that `feed` does not block its
    /// thread waiting for the pool (returns at once unless the session applies on a pool).
    public func readyForInput() async {
        await background?.room()
    }

    /// Applies a stanza parsed elsewhere: a client connection to an XMPP server parses its own stream (it
    /// restarts it after TLS and SASL) and hands each stanza of the session here, to the same decoder and storage
    /// path as every other source.
    @discardableResult
    public func receive(_ stanza: Stanza) -> StanzaDisposition {
        precondition(background == nil, "receive(_:) decodes at once; a session applying in the background cannot")
        return feed.receive(stanza, apply: apply)
    }

    private func apply(_ update: PresenceUpdate) {
        let now = clock()
        willApply?(update, now)
        storage.apply(update, receivedAt: now)
        onApplied?(update, now)
    }
}
