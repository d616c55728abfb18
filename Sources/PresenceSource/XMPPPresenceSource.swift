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
    /// The server's list of sessions, asked instead of last activity about each member when there is one.
    let sessionDirectory: (any SessionDirectory)?
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
        resync: ResyncConfiguration? = .default, sessionDirectory: (any SessionDirectory)? = nil,
        logger: Logger = Logger(label: "presence.xmpp"), clock: @escaping @Sendable () -> PresenceTime = PresenceTime.now
    ) {
        self.configuration = configuration
        self.answering = answering
        self.resync = resync
        self.sessionDirectory = sessionDirectory
        let confirmations = Confirmations(
            maximumInFlight: answering.questionsInFlight, usesDirectory: sessionDirectory != nil)
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
                    another client logged in as \(configuration.account)/\(configuration.resource ?? "?") and the server \
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
}
