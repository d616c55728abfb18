import Foundation
import Logging
import PresenceIngest
import PresenceModel
import PresenceStore
import XMPPClient
import XMPPStream

/// Presence from a real XMPP server: logs in as a watcher account whose roster holds the people to watch (a
/// shared roster group), and keeps every contact's presence in a storage, reconnecting forever.
///
/// Because the roster says who the watcher should hear from, the store knows more than a stream of stanzas
/// tells: after the server's snapshot, a member the server says has no available resource is `offline` (a known
/// state), while a JID outside the roster stays `unknown`. After a reconnect, the new snapshot reconciles what
/// changed during the outage: a member who left meanwhile is `offline`, a resource that went away is gone.
///
/// Nothing is concluded from silence or from the order in which the server answers: a member is `offline` only
/// once the server said so (``MemberConfirmation`` has the rule), and the snapshot is complete only when every
/// member has a certain answer.
///
/// Every contact presence goes through an ``IngestSession``: the same decoder, limits and storage path as the
/// feed port and the replays.
///
/// It is also the origin an evicting storage refills from (``PresenceProber``): a ``PresenceLookup`` built on it
/// probes roster members the storage lost, on the same session.
public final class XMPPPresenceSource: PresenceProber, Sendable {
    public let configuration: XMPPClientConfiguration
    public let storage: any MemoryStorage
    let decoder: PresenceDecoder
    let backoff: ReconnectBackoff
    let logger: Logger
    let clock: @Sendable () -> PresenceTime
    let state: Locked<XMPPSourceStatus>
    /// The roster members whose presence the watcher receives: the only users a probe is answered for.
    let watched = Locked<Set<BareJID>>([])
    let confirmations: Confirmations
    /// Members whose stored entry was rebuilt after a loss from one resource's presence, not confirmed since.
    let partial = Locked<Set<BareJID>>([])
    /// Told of a member whose answer stopped being partial: see ``setConfirmationObserver(_:)``.
    let confirmationObserver = Locked<(@Sendable (BareJID) -> Void)?>(nil)
    let pendingProbes: PendingProbes
    let answering: AnswerConfiguration
    let resync: ResyncConfiguration?
    let resyncCandidates = ResyncCandidates()
    /// The current session's keep-alive pings, counted into the status's total when the session ends.
    let sessionPings = Locked<KeepAlivePings?>(nil)

    /// How the source decides that the server has answered about a member.
    public struct AnswerConfiguration: Hashable, Sendable {
        /// How long a member must stay quiet after an available presence before the answer counts as having all
        /// their resources: the server sends one presence per resource, from as many processes on a server like
        /// ejabberd, in no promised order.
        public var settle: Duration
        /// How often members of an unfinished snapshot are asked again (probe and last activity), and warned about.
        public var reaskInterval: Duration
        /// The most last-activity questions in flight at once; fewer while the server answers slowly (about a
        /// second of its answers), so a server that reads the watcher at a limited rate is never handed a backlog.
        public var questionsInFlight: Int

        public static let defaultSettle: Duration = .milliseconds(10)
        public static let defaultReaskInterval: Duration = .seconds(10)
        public static let defaultQuestionsInFlight = 256

        public init(
            settle: Duration = defaultSettle, reaskInterval: Duration = defaultReaskInterval,
            questionsInFlight: Int = defaultQuestionsInFlight
        ) {
            precondition(questionsInFlight > 0, "at least one question in flight")
            self.settle = settle
            self.reaskInterval = reaskInterval
            self.questionsInFlight = questionsInFlight
        }
    }

    /// The priority of the watcher's own presence: negative, so no server routes a chat message to it
    /// (RFC 6121 §8.5.2.1.1).
    public static let watcherPriority = -1

    public init(
        configuration: XMPPClientConfiguration, storage: any MemoryStorage, decoder: PresenceDecoder = .init(),
        backoff: ReconnectBackoff = .init(), answering: AnswerConfiguration = .init(),
        resync: ResyncConfiguration? = .default, logger: Logger = Logger(label: "presence.xmpp"),
        clock: @escaping @Sendable () -> PresenceTime = PresenceTime.now
    ) {
        self.configuration = configuration
        self.answering = answering
        self.resync = resync
        let confirmations = Confirmations(maximumInFlight: answering.questionsInFlight)
        self.confirmations = confirmations
        pendingProbes = PendingProbes(confirmations: confirmations)
        self.storage = storage
        self.decoder = decoder
        self.backoff = backoff
        self.logger = logger
        self.clock = clock
        state = Locked(
            XMPPSourceStatus(
                jid: configuration.account.rawValue, server: "\(configuration.connectHost):\(configuration.port)"))
    }

    /// The source's state now.
    public var status: XMPPSourceStatus {
        // Under the session's ping counter's lock, as when a session's pings are added to the total: a read never
        // sees them in neither place.
        var status = sessionPings.withLock { pings in
            var status = state.withLock { $0 }
            status.keepAlivePings += pings?.count ?? 0
            return status
        }
        status.partialUsers = partialCount
        (status.questionsWaiting, status.questionsInFlight) = confirmations.questionsWaiting
        return status
    }

    /// Whether what the storage shows is live: a session is logged in and its snapshot is complete.
    public var isLive: Bool { state.withLock { $0.connected && $0.snapshotComplete } }

    public func isProbeable(_ jid: BareJID) -> Bool { watched.withLock { $0.contains(jid) } }

    public func isPartial(_ jid: BareJID) -> Bool { partial.withLock { $0.contains(jid) } }

    /// Calls `observer` with each member the server vouched for whose stored answer was partial
    /// (``isPartial(_:)``) until then. The answer loses its `partial` though the status may stay the same, which
    /// the storage does not publish: the service's change streams send the member's answer again on this call.
    /// (A status restored from a disk tier becoming current is the tier's to tell:
    /// ``MemoryStorage/setRestoredObserver(_:)``.) The observer may be called while the source holds a lock of
    /// its own: it must not call back into the source.
    public func setConfirmationObserver(_ observer: (@Sendable (BareJID) -> Void)?) {
        confirmationObserver.withLock { $0 = observer }
    }

    func tellConfirmationObserver(_ member: BareJID) {
        if let observer = confirmationObserver.withLock({ $0 }) { observer(member) }
    }

    /// How many members' entries are partial now (see ``isPartial(_:)``).
    public var partialCount: Int { partial.withLock { $0.count } }

    /// Whether a session is up and its roster known.
    public var isConnected: Bool { pendingProbes.isOpen }

    public func probe(_ jids: Set<BareJID>, timeout: Duration) async throws -> [BareJID: UserPresence] {
        try await pendingProbes.probe(jids, timeout: timeout)
    }

    /// Connects, consumes, and reconnects with backoff until the task is cancelled.
    public func run() async {
        var backoff = self.backoff
        var roster: [BareJID: RosterItem] = [:]
        var sessions = 0
        while !Task.isCancelled {
            let attempt = state.withLock { state in
                state.connectAttempts += 1
                return state.connectAttempts
            }
            logger.info(
                "connecting to the XMPP server",
                metadata: [
                    "jid": "\(configuration.account)", "server": "\(configuration.connectHost):\(configuration.port)",
                    "attempt": "\(attempt)",
                ])
            var failure: XMPPClientError = .closed
            do {
                try await XMPPConnection.withSession(configuration, logger: logger) { session in
                    sessions += 1
                    let isReconnect = sessions > 1
                    state.withLock { state in
                        state.connected = true
                        state.snapshotComplete = false
                        state.encrypted = session.isEncrypted
                        state.connectedSince = clock()
                        state.disconnectedSince = nil
                        state.lastError = nil
                        if isReconnect { state.reconnects += 1 }
                    }
                    logger.info(
                        "logged in to the XMPP server",
                        metadata: [
                            "jid": "\(session.jid)", "tls": "\(session.isEncrypted)", "sasl": "\(session.mechanism)",
                        ])
                    try await consume(session, roster: &roster)
                }
            } catch let error as XMPPClientError {
                failure = error
            } catch {
                failure = .transport("\(error)")
            }
            let stopping = Task.isCancelled
            let replaced = failure.isResourceConflict
            let (wasConnected, wasLive) = state.withLock { state in
                let was = (state.connected, state.connected && state.snapshotComplete)
                state.connected = false
                state.snapshotComplete = false
                if was.0 || state.disconnectedSince == nil { state.disconnectedSince = clock() }
                if state.everLive && state.notLiveSince == nil { state.notLiveSince = .now }
                if !stopping { state.lastError = failure.description }
                if replaced { state.replaced = true }
                return was
            }
            if stopping { break }
            if replaced {
                // Logging in again would take the resource back and replace the other session, which would do the
                // same: two processes on one resource replace each other for ever.
                logger.critical(
                    """
                    another client logged in as \(configuration.account)/\(configuration.resource) and the server \
                    replaced this session; not reconnecting. Give each replica its own --xmpp-resource, then restart \
                    this one
                    """,
                    metadata: ["error": "\(failure)"])
                break
            }
            // Only a session that got as far as a complete snapshot starts the delays over: one that logs in and
            // then fails the same way every time (a roster over the stanza limit) must not retry every second.
            if wasLive { backoff.reset() }
            let delay = backoff.nextDelay(permanentFailure: failure.isPermanent)
            let metadata: Logger.Metadata = [
                "error": "\(failure)", "retryIn": "\(delay.formatted(.units(allowed: [.seconds, .milliseconds])))",
            ]
            if wasConnected {
                logger.warning(
                    "the XMPP connection ended; statuses stay as of now until it is back", metadata: metadata)
            } else {
                logger.error("cannot log in to the XMPP server", metadata: metadata)
            }
            try? await Task.sleep(for: delay)
        }
        logger.info("XMPP source stopped")
    }

    /// One logged-in session: the roster, the initial presence and its snapshot, then live presence and roster
    /// pushes until the connection ends (or the task is cancelled: the stream is then closed politely).
    func consume(_ session: XMPPSession, roster: inout [BareJID: RosterItem]) async throws {
        let confirmations = self.confirmations
        sessionPings.withLock { $0 = session.keepAlivePings }
        defer {
            pendingProbes.close()
            confirmations.reset()
            resyncCandidates.reset()
            state.withLock { $0.readLimit = nil }
            let pings = session.keepAlivePings.count
            sessionPings.withLock { current in
                state.withLock { $0.keepAlivePings += pings }
                current = nil
            }
        }
        let ownAccount = try? BareJID(String(session.bareJID))
        let ingest = IngestSession(storage: storage, decoder: decoder, clock: clock)
        // A member made whole by the update about to be applied, told to the observer once it is applied.
        let madeWhole = Locked<BareJID?>(nil)
        ingest.willApply = { [self] update, time in
            confirmations.record(update, receivedAt: time)
            if notePartial(update) { madeWhole.withLock { $0 = update.from.bare } }
            if resync != nil {
                noteResyncCorrection(update)
                resyncCandidates.note(update)
            }
        }
        let sender = session.sender
        try await session.send(RosterQuery.request(id: "roster-1"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await self.settleAnswers(sender: sender) }
            if let resync { group.addTask { await self.resyncPeriodically(resync, sender: sender) } }
            defer { group.cancelAll() }
            while let stanza = try await nextStanza(of: session) {
                let root = stanza.root
                if stanza.isElement(root, named: "presence", in: XMPPNamespace.client) {
                    if let from = stanza.attribute("from", of: root), let jid = try? JID(from),
                        jid.bare == ownAccount
                    {
                        continue
                    }
                    let received = ingest.receive(stanza)
                    if let member = madeWhole.withLock({ member in defer { member = nil }; return member }) {
                        tellConfirmationObserver(member)
                    }
                    if case .update(let update) = received {
                        state.withLock { $0.presencesReceived += 1 }
                        // An unavailable from the bare JID is final at once; an available answer waits for the
                        // settle window, which the settle loop wakes for.
                        if update.from.resource == nil && update.availability == .unavailable
                            && !confirmations.isEmpty
                        {
                            settleCertainAnswers()
                        }
                    }
                    continue
                }
                guard let iq = IQ(stanza) else { continue }
                switch iq.kind {
                case .result where iq.id == "roster-1", .error where iq.id == "roster-1":
                    let items = iq.kind == .result ? RosterQuery.items(in: stanza).items : []
                    if iq.kind == .error {
                        logger.error(
                            "the server refused the roster; only presences that arrive are known",
                            metadata: ["condition": "\(IQ.errorCondition(of: stanza) ?? "unknown")"])
                    }
                    replaceRoster(&roster, with: items)
                    pendingProbes.open(sender)
                    let members = watchedMembers(roster)
                    let id = confirmations.open(.snapshot, members: members)
                    state.withLock {
                        $0.snapshotRound = id
                        $0.snapshotUnconfirmed = members.count
                    }
                    var writer = XMPPWriter()
                    writer.presence(priority: XMPPPresenceSource.watcherPriority)
                    // The server probes every contact in answer to the initial presence (RFC 6121 §4.2.2).
                    try await session.send(writer.bytes + IQ.ping(id: id))
                case .result, .error:
                    if confirmations.lastActivityAnswered(iq, stanza) {
                        settleCertainAnswers()
                    } else {
                        // The ping after a round's question: ask the server itself about members it said nothing
                        // of.
                        guard confirmations.pingAnswered(iq.id) else { continue }
                    }
                    // An answer frees a place in the question window: the next question goes.
                    let questions = confirmations.release()
                    if !questions.isEmpty { try await session.send(questions) }
                case .set where iq.payloadNamespace == RosterQuery.namespace:
                    // RFC 6121 §2.1.6: a push from anyone but the account itself (or the server) is ignored.
                    guard iq.from == nil || iq.from.flatMap({ try? BareJID($0) }) == ownAccount else {
                        try await session.send(IQ.serviceUnavailable(answering: iq))
                        continue
                    }
                    try await session.send(IQ.result(answering: iq))
                    let added = applyPush(RosterQuery.items(in: stanza).items, to: &roster)
                    if !added.isEmpty {
                        // Ask for the new contacts' presence.
                        let id = confirmations.open(.rosterAddition, members: added)
                        var writer = XMPPWriter()
                        for member in added { writer.presence(type: "probe", to: member.rawValue) }
                        try await session.send(writer.bytes + IQ.ping(id: id))
                    }
                case .get, .set:
                    try await session.send(IQ.serviceUnavailable(answering: iq))
                }
            }
        }
    }

    /// The session's next stanza; nil when the server closed the stream, or when the task is cancelled (the
    /// service is stopping): the stream is then closed (`</stream:stream>`), so the server ends the watcher's
    /// session as a logout rather than a lost connection.
    func nextStanza(of session: XMPPSession) async throws -> Stanza? {
        if !Task.isCancelled {
            do {
                let stanza = try await session.next()
                if !Task.isCancelled { return stanza }
            } catch {
                guard Task.isCancelled else { throw error }
            }
        }
        await session.closeGracefully()
        return nil
    }

    /// Makes every answer that is certain now final: the storage agrees with it, and the rounds it completes end.
    /// Called after each statement that is final at once (an unavailable from a bare JID, a last-activity answer)
    /// and by the settle loop (an available answer once the member has been quiet for the settle window). Returns
    /// when the next
    /// available answer becomes final if its member stays quiet.
    @discardableResult
    func settleCertainAnswers(at now: ContinuousClock.Instant = .now) -> ContinuousClock.Instant? {
        let pass = confirmations.settle(at: now, quiet: answering.settle) { settled in
            reconcile(settled, at: clock())
        }
        for round in pass.finished { finish(round, at: now) }
        return pass.nextDeadline
    }

    /// How often the question window is sized to the server's answers and the read limit looked at.
    static let pacePeriod: Duration = .milliseconds(100)

    /// XEP-0012 counts whole seconds: `0` may mean a session ended less than this long ago.
    static let lastActivityGranularity: Duration = .seconds(1)

    /// Makes the storage agree with every answer that became certain, ends the rounds they complete, and asks
    /// again about snapshot members with no certain answer, until the session ends.
    func settleAnswers(sender: XMPPStanzaSender) async {
        // An available answer is final `settle` after the member's last presence: the loop wakes then, and at
        // least every `tick` for answers that began after it went to sleep (theirs end `settle` ≥ `tick` later).
        let tick = max(Duration.milliseconds(1), min(answering.settle, .milliseconds(25)))
        var lastAsked: [String: ContinuousClock.Instant] = [:]
        var wake = ContinuousClock.now + tick
        var nextPace = ContinuousClock.now
        while !Task.isCancelled {
            do { try await Task.sleep(until: wake, clock: .continuous) } catch { return }
            let now = ContinuousClock.now
            let deadline = settleCertainAnswers(at: now)
            wake = min(deadline ?? now + tick, now + tick)
            confirmations.recheckLastActivity(at: now, after: Self.lastActivityGranularity)
            // The window and the limit change at the detector's resolution, not at every tick.
            if now >= nextPace {
                nextPace = now + Self.pacePeriod
                if let change = confirmations.pace(at: now) { noteReadLimit(change) }
                if let limit = confirmations.readLimit, let renamed = updateReadLimit(limit).renamed {
                    // The rate a limit was first seen at may be a shaper's burst running out: the likely setting
                    // is said again once the rate settles on another.
                    logger.warning("\(renamed.explanation)", metadata: ["bytesPerSecond": "\(renamed.bytesPerSecond)"])
                }
            }
            for (id, started) in confirmations.rounds(.snapshot) + confirmations.rounds(.rosterAddition)
                + confirmations.rounds(.resync)
            where now - (lastAsked[id] ?? started) >= answering.reaskInterval {
                lastAsked[id] = now
                guard let pending = confirmations.pending(id) else { continue }
                warnAbout(pending)
                confirmations.reask(id)
            }
            let questions = confirmations.release(at: now)
            if !questions.isEmpty {
                do { try await sender.send(questions) } catch { return }
            }
        }
    }

    /// Notes, before an update is applied, whether it rebuilds a member the storage lost: one resource's presence
    /// says nothing of the member's others, so the rebuilt entry is partial until the server confirms it. An
    /// unavailable presence from the bare JID says everything (no resource at all): the entry is complete, and
    /// true is returned when it was partial until then.
    func notePartial(_ update: PresenceUpdate) -> Bool {
        let member = update.from.bare
        if update.from.resource == nil && update.availability == .unavailable {
            return partial.withLock { $0.remove(member) != nil }
        }
        // The lookup makes the member the most recently used entry of an LRU: it is not the one evicted before
        // the update lands. (The shown presence only: an encoded storage reads it in place.)
        guard isProbeable(member),
            storage.withShownPresence(member, { if case .lost = $0 { true } else { false } })
        else { return false }
        partial.withLock { _ = $0.insert(member) }
        return false
    }

    /// One member's certain answer, written to the storage (called under the confirmations' lock).
    func reconcile(_ settled: Confirmations.Settled, at now: PresenceTime) {
        let member = settled.member
        let wasPartial = partial.withLock { $0.remove(member) != nil }
        // A member taken off the roster meanwhile is left alone: the storage forgot them on purpose.
        guard isProbeable(member) else { return }
        let corrected: Bool
        switch settled.verdict {
        case .offline:
            resyncCandidates.confirmedOffline(member)
            let stored = storage.lookup(member)
            if case .present(let presence) = stored, presence.status?.isAvailable == false {
                // Already offline: the server's answer reached the storage first, having found the member shown
                // available, or the member was never shown available.
                corrected = settled.correctsShownAvailable
                break
            }
            if case .present(let presence) = stored { corrected = presence.status?.isAvailable == true } else {
                corrected = settled.correctsShownAvailable
            }
            storage.apply(
                PresenceUpdate(from: JID(bare: member, resource: nil), availability: .unavailable), receivedAt: now)
        case .available:
            corrected = SnapshotReconciliation.keepOnly(settled.resources, of: member, in: storage, at: now) > 0
        }
        // The server vouched for what is stored now: a status restored from disk is current again.
        storage.confirm(member)
        if wasPartial { tellConfirmationObserver(member) }
        if corrected && settled.purpose == .resync { countResyncCorrection(of: member) }
        guard settled.purpose == .probe else { return }
        let answer: UserPresence
        if case .present(let stored) = storage.lookup(member), stored.status != nil {
            answer = stored
        } else if let captured = settled.captured, captured.status != nil, settled.verdict == .available {
            answer = captured
        } else {
            answer = UserPresence(
                applying: PresenceUpdate(from: JID(bare: member, resource: nil), availability: .unavailable),
                receivedAt: now)
        }
        pendingProbes.answer(answer, for: member, round: settled.round)
    }

    /// A round whose every member has a certain answer.
    func finish(_ round: Confirmations.Finished, at now: ContinuousClock.Instant) {
        switch round.purpose {
        case .probe:
            pendingProbes.finish(round: round.round)
        case .rosterAddition:
            state.withLock { $0.markedOffline += round.offline }
        case .resync:
            break
        case .snapshot:
            let duration = now - round.started
            let isCurrent = state.withLock { state in
                guard state.snapshotRound == round.round else { return false }
                state.snapshotComplete = true
                state.everLive = true
                state.notLiveSince = nil
                state.snapshotUnconfirmed = 0
                state.warning = nil
                state.lastSnapshotDuration = duration
                state.markedOffline += round.offline
                return true
            }
            guard isCurrent else { return }
            logger.info(
                "roster snapshot complete",
                metadata: [
                    "members": "\(round.members)", "available": "\(round.members - round.offline)",
                    "offline": "\(round.offline)", "took": "\(duration)",
                ])
        }
    }
}
