import PresenceModel

/// Lookups on top of any ``MemoryStorage``, refilling what it lost from the presence server by probe
/// (``PresenceProber``), the way an image cache refills a memory miss from disk or network.
///
/// An evicting storage then loses nothing for good: it pays in latency and server load instead. The lookup keeps
/// that load in hand: only roster members are probed, one probe is in flight per user however many lookups wait
/// for it (single flight), a batch sends its probes together and waits once, a probe unanswered within
/// ``Configuration/probeTimeout`` answers `lost` with the reason, and probes beyond
/// ``Configuration/probesPerSecond`` are refused (the lookup answers at once, with the reason) rather than queued
/// without bound.
public final class PresenceLookup: Sendable {
    /// The limits on probing, each with a default.
    public struct Configuration: Hashable, Sendable {
        /// How long a lookup waits for a probe's answer.
        public var probeTimeout: Duration
        /// The most users probed per second (with a burst of one second's worth).
        public var probesPerSecond: Double

        public static let defaultProbeTimeout: Duration = .seconds(2)
        public static let defaultProbesPerSecond: Double = 200

        public init(
            probeTimeout: Duration = defaultProbeTimeout, probesPerSecond: Double = defaultProbesPerSecond
        ) {
            self.probeTimeout = probeTimeout
            self.probesPerSecond = probesPerSecond
        }
    }

    public let storage: any MemoryStorage
    public let prober: (any PresenceProber)?
    public let configuration: Configuration
    private let state: Locked<State>
    private let onProbeAnswered: (@Sendable (Duration) -> Void)?

    /// One probe batch on its way to the server, which any number of lookups wait for (single flight).
    private typealias InFlightProbe = Promise<[BareJID: Result<UserPresence, ProbeFailure>]>

    private struct State {
        var inFlight: [BareJID: InFlightProbe] = [:]
        var budget: ProbeBudget
        var statistics = ProbeStatistics()
    }

    /// - Parameters:
    ///   - storage: the storage answers come from first.
    ///   - prober: the presence server asked for users the storage does not have; nil when there is none.
    ///   - configuration: the default policy, and how many probes may be asked and waited for.
    ///   - onProbeAnswered: told how long each answered probe batch took (for a metrics histogram).
    public init(
        storage: any MemoryStorage, prober: (any PresenceProber)? = nil, configuration: Configuration = .init(),
        onProbeAnswered: (@Sendable (Duration) -> Void)? = nil
    ) {
        self.storage = storage
        self.prober = prober
        self.configuration = configuration
        self.onProbeAnswered = onProbeAnswered
        state = Locked(State(budget: ProbeBudget(perSecond: configuration.probesPerSecond)))
    }

    /// `cache-else-probe` when there is a prober, `cache-only` otherwise.
    public var defaultPolicy: LookupPolicy { prober == nil ? .cacheOnly : .cacheElseProbe }

    public var statistics: ProbeStatistics { state.withLock { $0.statistics } }

    /// One user's answer under `policy` (``defaultPolicy`` when nil).
    public func lookup(_ jid: BareJID, policy: LookupPolicy? = nil) async -> LookupAnswer {
        await lookup([jid], policy: policy)[0]
    }

    /// Each user's answer under `policy` (``defaultPolicy`` when nil), in the order asked. The probes a batch
    /// needs go out together, and the batch waits once.
    public func lookup(_ jids: [BareJID], policy: LookupPolicy? = nil) async -> [LookupAnswer] {
        var (answers, wanted) = storageAnswers(jids, policy: policy ?? defaultPolicy)
        guard !wanted.isEmpty else { return answers }
        guard let prober, prober.isConnected else {
            for index in wanted { answers[index].probeFailure = .notConnected }
            state.withLock { $0.statistics.notConnected += wanted.count }
            return answers
        }
        var waiting: [(index: Int, flight: InFlightProbe)] = []
        var fresh: Set<BareJID> = []
        let now = ContinuousClock.now
        let newFlight = InFlightProbe()
        state.withLock { state in
            for index in wanted {
                let jid = answers[index].jid
                if let flight = state.inFlight[jid] {
                    if flight !== newFlight { state.statistics.joinedInFlight += 1 }
                    waiting.append((index, flight))
                } else if !prober.isProbeable(jid) {
                    answers[index].probeFailure = .notAMember
                } else if state.budget.take(at: now) {
                    state.inFlight[jid] = newFlight
                    fresh.insert(jid)
                    waiting.append((index, newFlight))
                } else {
                    answers[index].probeFailure = .rateLimited
                    state.statistics.refusedByBudget += 1
                }
            }
            state.statistics.sent += fresh.count
        }
        if !fresh.isEmpty {
            Task { await self.send(newFlight, probing: fresh, through: prober) }
        }
        var outcomes: [ObjectIdentifier: [BareJID: Result<UserPresence, ProbeFailure>]] = [:]
        for (index, flight) in waiting {
            let key = ObjectIdentifier(flight)
            if outcomes[key] == nil { outcomes[key] = await flight.value() }
            let jid = answers[index].jid
            switch outcomes[key]?[jid] {
            case .success(let presence):
                answers[index] = LookupAnswer(jid: jid, stored: .present(presence), origin: .probe)
            case .failure(let failure):
                // The storage may have heard from the user meanwhile (a live update); otherwise it is still lost.
                answers[index] = storageAnswer(jid, probeFailure: failure)
            case nil:
                answers[index] = storageAnswer(jid, probeFailure: .timeout)
            }
        }
        return answers
    }

    /// Calls `body` with each user's storage answer, in the order asked, when the storage alone answers them all
    /// under `policy` (``defaultPolicy`` when nil); returns false, having stopped at the first user who needs the
    /// server, when one does (then ``lookup(_:policy:)-([BareJID],_)`` answers the batch). Each answer is what `lookup` would
    /// give without probing: origin `storage` for a stored user, `none` otherwise, no probe failure.
    ///
    /// What the query API answers on the connection's event loop, without a task and without building the users'
    /// presences: most lookups are storage hits. `body` may run under the storage's lock
    /// (``MemoryStorage/withShownPresence(_:_:)``).
    public func withStorageAnswers(
        _ jids: [BareJID], policy: LookupPolicy? = nil, _ body: (BareJID, StoredShownPresence) -> Void
    ) -> Bool {
        let policy = policy ?? defaultPolicy
        guard policy != .probe else { return false }
        for jid in jids {
            // A partial entry's answer says so, which this path does not write.
            if let prober, prober.isPartial(jid) { return false }
            func decide(_ stored: StoredShownPresence) -> Bool {
                switch (policy, stored) {
                case (.cacheElseProbe, .lost), (.cacheElseProbe, .unknown):
                    return false  // a miss the server should fill
                default:
                    body(jid, stored)
                    return true
                }
            }
            // A restored answer and one from disk say so, which this path does not write either.
            guard storage.withPlainShownPresence(jid, decide) ?? false else { return false }
        }
        return true
    }

    /// What the storage's tiers answer for `jid` now, without asking the server: the tier it came from, and
    /// whether the entry is partial or restored. What a change stream sends for each change, so that an event
    /// says as much as a `cache-only` query would.
    public func storedAnswer(_ jid: BareJID) -> LookupAnswer { storageAnswer(jid) }

    /// The storage's answer for `jid`: the tier it came from, and whether the entry is partial or restored.
    private func storageAnswer(_ jid: BareJID, probeFailure: ProbeFailure? = nil) -> LookupAnswer {
        let (stored, tier) = storage.tieredLookup(jid)
        var answer = LookupAnswer(jid: jid, fromStorage: stored, probeFailure: probeFailure)
        if tier == .disk { answer.origin = .disk }
        if answer.stored.presence != nil { answer.restoredAsOf = storage.restoredAsOf(jid) }
        if answer.origin != .none, let prober, prober.isPartial(jid) { answer.isPartial = true }
        return answer
    }

    /// The storage's answers, and the indices of those the policy wants probed.
    private func storageAnswers(_ jids: [BareJID], policy: LookupPolicy) -> ([LookupAnswer], [Int]) {
        let answers = jids.map { storageAnswer($0) }
        let wanted = answers.indices.filter { index in
            switch policy {
            case .cacheOnly: false
            // A partial entry is a miss: the server has the user's whole presence.
            case .cacheElseProbe: answers[index].origin == .none || answers[index].isPartial
            case .probe: true
            }
        }
        return (answers, wanted)
    }

    /// How long past the timeout a prober that has not returned is waited for.
    static let proberGrace: Duration = .milliseconds(500)

    /// Probes one batch, bounded by the timeout, and hands every waiting lookup the outcome.
    private func send(_ flight: InFlightProbe, probing jids: Set<BareJID>, through prober: any PresenceProber) async {
        let started = ContinuousClock.now
        let timeout = configuration.probeTimeout
        let result: Result<[BareJID: UserPresence], ProbeFailure> = await withTaskGroup(
            of: Result<[BareJID: UserPresence], ProbeFailure>?.self
        ) { group in
            group.addTask {
                do { return .success(try await prober.probe(jids, timeout: timeout)) } catch let failure
                    as ProbeFailure
                {
                    return .failure(failure)
                } catch {
                    return nil
                }
            }
            // The prober returns what it has at the timeout; this only guards against one that does not.
            group.addTask {
                try? await Task.sleep(for: timeout + Self.proberGrace)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .failure(.timeout)
        }
        let elapsed = ContinuousClock.now - started
        var outcome: [BareJID: Result<UserPresence, ProbeFailure>] = [:]
        switch result {
        case .success(let answers):
            for jid in jids {
                // A member without an answer got no certain one in time, or left the roster meanwhile.
                outcome[jid] =
                    answers[jid].map { .success($0) } ?? .failure(prober.isProbeable(jid) ? .timeout : .notAMember)
            }
        case .failure(let failure):
            for jid in jids { outcome[jid] = .failure(failure) }
        }
        state.withLock { state in
            for jid in jids where state.inFlight[jid] === flight { state.inFlight[jid] = nil }
            for case .failure(let failure) in outcome.values {
                if failure == .timeout { state.statistics.timedOut += 1 } else { state.statistics.failed += 1 }
            }
            let answered = outcome.values.count { if case .success = $0 { true } else { false } }
            state.statistics.answered += answered
            if answered > 0 { state.statistics.latency.record(elapsed) }
        }
        if case .success = result { onProbeAnswered?(elapsed) }
        flight.fulfil(outcome)
    }
}
