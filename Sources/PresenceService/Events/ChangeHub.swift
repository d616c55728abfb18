import Logging
import PresenceStore
import ServiceLifecycle

/// Fans a storage's changes out to the open change streams (`GET /v1/presence/events`), and remembers the
/// recent ones so that a stream reconnecting with `Last-Event-ID` misses nothing.
///
/// Every change the storage publishes (a visible status change, a loss, a refill), and every answer sent again
/// because it changed with its status the same (``republish(_:)``, ``republishAll()``), gets the next sequence
/// number, which with the process's ``instance`` is the `id:` of the event that carries it (``EventID``). The hub
/// becomes the storage's change observer when the first stream opens and stays so: until then, ingest pays nothing
/// for change tracking. A storage that can pin
/// (``MemoryStorage/pin(_:)``: the LRU) keeps every user a stream watches.
public final class ChangeHub: Sendable {
    public let storage: any MemoryStorage
    public let configuration: EventStreamConfiguration
    /// Whose change numbers the event ids are: drawn at random when the process starts.
    public let instance: String
    /// The time heartbeats are due by: the system's monotonic clock in the service.
    let clock: ElapsedClock
    /// Each recent change's event, by its number, encoded once for every stream that writes it.
    let events = ChangeEvents()
    private let state = Locked(State())
    private let logger: Logger

    private struct State {
        var observing = false
        /// The last change's number.
        var sequence: UInt64 = 0
        /// Resumes after a number below this one cannot be exact: changes before it were not seen, or are no
        /// longer in the history.
        var resumableFrom: UInt64 = 0
        /// The latest changes, oldest first, at most `configuration.history`.
        var history: [(sequence: UInt64, key: BareJID)] = []
        var historyStart = 0
        var byKey: [BareJID: Watchers] = [:]
        var everything: [ObjectIdentifier: EventSubscription] = [:]
        var open: [ObjectIdentifier: EventSubscription] = [:]
        var closedAsStalled = 0
        var opened = 0
    }

    /// What a new stream starts with.
    enum Start {
        /// Every watched user's current answer, stamped with this change number.
        case snapshot(UInt64)
        /// The changes since the client's `Last-Event-ID` are pending in the subscription already.
        case resumed
    }

    /// A hub for `storage`'s changes, its heartbeats due by the system's monotonic clock.
    public convenience init(storage: any MemoryStorage, configuration: EventStreamConfiguration, logger: Logger) {
        self.init(storage: storage, configuration: configuration, logger: logger, clock: .continuous)
    }

    /// A hub whose heartbeats are due by `clock` (a test's).
    package init(
        storage: any MemoryStorage, configuration: EventStreamConfiguration, logger: Logger, clock: ElapsedClock
    ) {
        self.storage = storage
        self.configuration = configuration
        self.logger = logger
        self.clock = clock
        instance = EventID.newInstance()
    }

    /// Streams open now, streams opened since start, and streams closed because their reader stopped reading.
    public var counts: (open: Int, opened: Int, closedAsStalled: Int) {
        state.withLock { ($0.open.count, $0.opened, $0.closedAsStalled) }
    }

    /// `requested` with each JID another stream already watches replaced by the hub's own copy of its text: equal,
    /// and held once however many streams watch that person.
    func watched(_ requested: WatchedJIDs) -> WatchedJIDs {
        state.withLock { state in
            requested.replacingEach { jid in state.byKey.index(forKey: jid).map { state.byKey.keys[$0] } ?? jid }
        }
    }

    /// Opens a stream; nil when ``EventStreamConfiguration/maxStreams`` are open already.
    func subscribe(_ subscription: EventSubscription, resumingAfter lastEventID: EventID?) -> Start? {
        // Checked, registered and numbered under one lock: concurrent opens never pass the limit together, and
        // every change after the snapshot's number is marked on the new stream, every change up to it is in the
        // storage its snapshot reads.
        let start = state.withLock { state -> Start? in
            guard state.open.count < configuration.maxStreams else { return nil }
            let id = ObjectIdentifier(subscription)
            state.open[id] = subscription
            state.opened += 1
            if let watched = subscription.watched {
                for key in watched {
                    if state.byKey[key]?.add(subscription) == nil { state.byKey[key] = Watchers(subscription) }
                }
            } else {
                state.everything[id] = subscription
            }
            if !state.observing {
                // Installed under the hub's lock, so no stream can take a snapshot before changes are seen
                // (safe: a storage never calls its observer while it holds a lock of its own). Nothing before this
                // point was seen: no resume can reach back past it.
                storage.setChangeObserver { [weak self] change in self?.publish(change) }
                state.observing = true
                state.sequence += 1
                state.resumableFrom = state.sequence
            }
            // Another replica's or an earlier process's number says nothing of this one's changes.
            guard let lastEventID, lastEventID.instance == instance,
                lastEventID.sequence >= state.resumableFrom, lastEventID.sequence <= state.sequence
            else {
                return .snapshot(state.sequence)
            }
            for (sequence, key) in state.history[state.historyStart...]
            where sequence > lastEventID.sequence && subscription.watches(key) {
                subscription.mark(key, sequence: sequence)
            }
            return .resumed
        }
        // On screen, not evicted: an LRU keeps every watched user for as long as the stream is open.
        if start != nil, let watched = subscription.watched { storage.pin(watched) }
        return start
    }

    func unsubscribe(_ subscription: EventSubscription) {
        defer { if let watched = subscription.watched { storage.unpin(watched) } }
        state.withLock { state in
            let id = ObjectIdentifier(subscription)
            state.open[id] = nil
            if let watched = subscription.watched {
                for key in watched {
                    state.byKey[key]?.remove(subscription)
                    if state.byKey[key]?.isEmpty == true { state.byKey[key] = nil }
                }
            } else {
                state.everything[id] = nil
            }
        }
    }

    private func publish(_ change: StorageChange) { publish(change.key) }

    /// Sends `key`'s answer again to the streams that watch it, though its status may not have changed: its
    /// `partial` or `asOf` went (the source confirmed it, or it was written since its restore). Nothing before the
    /// first stream opens: no stream could resume from that far back.
    func republish(_ key: BareJID) {
        guard state.withLock({ $0.observing }) else { return }
        publish(key)
    }

    /// Sends every open stream each of its users' answers again: the source turned live, which every answer
    /// says (`live`) though no status changed.
    func republishAll() {
        let (keyed, everyone) = state.withLock { (Array($0.byKey.keys), !$0.everything.isEmpty) }
        // The storage's keys outside the hub's lock: a storage may call its change observer (the hub) while it
        // lists them.
        for key in everyone ? storage.keys : keyed { publish(key) }
    }

    private func publish(_ key: BareJID) {
        state.withLock { state in
            state.sequence += 1
            let sequence = state.sequence
            state.history.append((sequence, key))
            if state.history.count - state.historyStart > configuration.history {
                state.historyStart += 1
                state.resumableFrom = max(state.resumableFrom, state.history[state.historyStart].sequence - 1)
                if state.historyStart >= configuration.history {
                    state.history.removeFirst(state.historyStart)
                    state.historyStart = 0
                }
            }
            if let watchers = state.byKey[key] {
                watchers.forEach { $0.mark(key, sequence: sequence) }
            }
            for subscription in state.everything.values { subscription.mark(key, sequence: sequence) }
        }
    }

    /// A stream was closed because its connection refused more bytes for longer than
    /// ``EventStreamConfiguration/writeTimeout`` (its reader stopped reading): logged and counted.
    func closedAsStalled() {
        logger.warning(
            "closing a change stream whose reader stopped reading",
            metadata: ["blockedFor": "more than \(configuration.writeTimeout)"])
        state.withLock { $0.closedAsStalled += 1 }
    }

    /// Ends every open stream: their clients reconnect, through a balancer to a replica that is ready.
    func closeAll() {
        let open = state.withLock { Array($0.open.values) }
        for subscription in open {
            subscription.finish()
            subscription.channel?.close(promise: nil)
        }
    }

    /// Heartbeats idle streams until the service shuts down; then ends every stream so their responses complete.
    /// (A stream whose reader stopped reading is closed by its own timer on its event loop: see
    /// ``ChannelEventStream``.)
    ///
    /// Idle streams are looked for every quarter of the heartbeat interval: a stream gets its heartbeat between one
    /// interval and a quarter more after its last write, and each look visits every open stream (18,000 of them
    /// every second cost 3 % of the service's CPU under 5,000 changes a second).
    func run() async {
        let tick = configuration.heartbeat / 4
        while !Task.isCancelled {
            try? await clock.sleep(for: tick)
            let open = state.withLock { Array($0.open.values) }
            let now = clock.now
            // Only a stream with nothing written for a heartbeat interval gets one: the others are known to be
            // alive, and waking every stream at once would delay the changes behind them.
            for subscription in open { subscription.heartbeat(ifIdleSince: now - configuration.heartbeat) }
        }
        let open = state.withLock { Array($0.open.values) }
        for subscription in open { subscription.finish() }
    }
}

/// The hub's timer as one of the service's lifecycle services.
struct ChangeHubService: Service {
    let hub: ChangeHub

    func run() async throws {
        await cancelWhenGracefulShutdown { await hub.run() }
    }
}
