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
/// tells: after the server's snapshot, a member with no available resource is `offline` (a known state), while a
/// JID outside the roster stays `unknown`. After a reconnect, the new snapshot reconciles what changed during
/// the outage: a member who left meanwhile is `offline`, a resource that went away is gone.
///
/// Every contact presence goes through an ``IngestSession``: the same decoder, limits and storage path as the
/// feed port and the replays.
///
/// It is also the origin an evicting storage refills from (``PresenceProber``): a ``PresenceLookup`` built on it
/// probes roster members the storage lost, on the same session.
public final class XMPPPresenceSource: PresenceProber, Sendable {
    public let configuration: XMPPClientConfiguration
    public let storage: any MemoryStorage
    private let decoder: PresenceDecoder
    private let backoff: ReconnectBackoff
    private let logger: Logger
    private let clock: @Sendable () -> PresenceTime
    private let state: Locked<XMPPSourceStatus>
    /// The roster members whose presence the watcher receives: the only users a probe is answered for.
    private let watched = Locked<Set<BareJID>>([])
    private let pendingProbes = PendingProbes()

    /// The priority of the watcher's own presence: negative, so no server routes a chat message to it
    /// (RFC 6121 §8.5.2.1.1).
    public static let watcherPriority = -1

    public init(
        configuration: XMPPClientConfiguration, storage: any MemoryStorage, decoder: PresenceDecoder = .init(),
        backoff: ReconnectBackoff = .init(), logger: Logger = Logger(label: "presence.xmpp"),
        clock: @escaping @Sendable () -> PresenceTime = PresenceTime.now
    ) {
        self.configuration = configuration
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
    public var status: XMPPSourceStatus { state.withLock { $0 } }

    /// Whether what the storage shows is live: a session is logged in and its snapshot is complete.
    public var isLive: Bool { state.withLock { $0.connected && $0.snapshotComplete } }

    public func isProbeable(_ jid: BareJID) -> Bool { watched.withLock { $0.contains(jid) } }

    /// Whether a session is up and its roster known.
    public var isConnected: Bool { pendingProbes.isOpen }

    public func probe(_ jids: Set<BareJID>) async throws -> [BareJID: UserPresence] {
        try await pendingProbes.probe(jids)
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
            let (wasConnected, wasLive) = state.withLock { state in
                let was = (state.connected, state.connected && state.snapshotComplete)
                state.connected = false
                state.snapshotComplete = false
                if was.0 || state.disconnectedSince == nil { state.disconnectedSince = clock() }
                if !stopping { state.lastError = failure.description }
                return was
            }
            if stopping { break }
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
    /// pushes until the connection ends.
    private func consume(_ session: XMPPSession, roster: inout [BareJID: RosterItem]) async throws {
        defer { pendingProbes.close() }
        let ownAccount = try? BareJID(String(session.bareJID))
        let ingest = IngestSession(storage: storage, decoder: decoder, clock: clock)
        var barrier = SnapshotBarrier()
        let pendingProbes = self.pendingProbes
        ingest.onApplied = { update, time in
            barrier.record(update)
            pendingProbes.record(update, at: time)
        }
        var barrierCount = 0
        func beginBarrier(for members: Set<BareJID>) async throws(XMPPClientError) -> String {
            barrierCount += 1
            let id = "snapshot-\(barrierCount)"
            barrier.begin(id: id, members: members)
            try await session.send(IQ.ping(id: id))
            return id
        }

        try await session.send(RosterQuery.request(id: "roster-1"))
        var snapshotStarted: ContinuousClock.Instant?
        var snapshotID: String?
        while let stanza = try await session.next() {
            let root = stanza.root
            if stanza.isElement(root, named: "presence", in: XMPPNamespace.client) {
                if let from = stanza.attribute("from", of: root), let jid = try? JID(from), jid.bare == ownAccount {
                    continue
                }
                if case .update = ingest.receive(stanza) {
                    state.withLock { $0.presencesReceived += 1 }
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
                pendingProbes.open(session.sender)
                var writer = XMPPWriter()
                writer.presence(priority: XMPPPresenceSource.watcherPriority)
                try await session.send(writer.bytes)
                snapshotStarted = .now
                snapshotID = try await beginBarrier(for: watchedMembers(roster))
            case .result, .error:
                if pendingProbes.complete(id: iq.id, storage: storage, at: clock(), isWatched: isProbeable) {
                    continue
                }
                guard let done = barrier.complete(id: iq.id) else { continue }
                let offline = SnapshotReconciliation.apply(
                    members: done.members, reported: done.seen, to: storage, at: clock())
                if iq.id == snapshotID, let snapshotStarted {
                    let duration = ContinuousClock.now - snapshotStarted
                    state.withLock { state in
                        state.snapshotComplete = true
                        state.lastSnapshotDuration = duration
                        state.markedOffline += offline
                    }
                    logger.info(
                        "roster snapshot complete",
                        metadata: [
                            "members": "\(done.members.count)", "available": "\(done.seen.count)",
                            "offline": "\(offline)", "took": "\(duration)",
                        ])
                } else {
                    state.withLock { $0.markedOffline += offline }
                }
            case .set where iq.payloadNamespace == RosterQuery.namespace:
                // RFC 6121 §2.1.6: a push from anyone but the account itself (or the server) is ignored.
                guard iq.from == nil || iq.from.flatMap({ try? BareJID($0) }) == ownAccount else {
                    try await session.send(IQ.serviceUnavailable(answering: iq))
                    continue
                }
                try await session.send(IQ.result(answering: iq))
                let added = applyPush(RosterQuery.items(in: stanza).items, to: &roster)
                if !added.isEmpty {
                    // Ask for the new contacts' presence; those who do not answer have no available resource.
                    for member in added {
                        var writer = XMPPWriter()
                        writer.presence(type: "probe", to: member.rawValue)
                        try await session.send(writer.bytes)
                    }
                    _ = try await beginBarrier(for: added)
                }
            case .get, .set:
                try await session.send(IQ.serviceUnavailable(answering: iq))
            }
        }
    }

    private func watchedMembers(_ roster: [BareJID: RosterItem]) -> Set<BareJID> {
        Set(roster.values.lazy.filter { $0.subscription.deliversContactPresence }.map(\.jid))
    }

    /// A new roster from the server: members no longer on it are forgotten (`unknown`: nobody watches them).
    private func replaceRoster(_ roster: inout [BareJID: RosterItem], with items: [RosterItem]) {
        let new = Dictionary(items.map { ($0.jid, $0) }, uniquingKeysWith: { _, last in last })
        for removed in roster.keys where new[removed] == nil { storage.remove(removed) }
        roster = new
        let members = watchedMembers(roster)
        watched.withLock { $0 = members }
        state.withLock { $0.rosterSize = members.count }
        logger.info("roster received", metadata: ["items": "\(items.count)", "watched": "\(members.count)"])
    }

    /// Applies a roster push; returns the members whose presence the watcher now receives and did not before.
    private func applyPush(_ items: [RosterItem], to roster: inout [BareJID: RosterItem]) -> Set<BareJID> {
        var added: Set<BareJID> = []
        for item in items {
            let wasWatched = roster[item.jid]?.subscription.deliversContactPresence ?? false
            if item.subscription == .remove {
                roster[item.jid] = nil
                storage.remove(item.jid)
            } else {
                roster[item.jid] = item
                if item.subscription.deliversContactPresence && !wasWatched { added.insert(item.jid) }
                if !item.subscription.deliversContactPresence && wasWatched { storage.remove(item.jid) }
            }
            logger.info("roster push", metadata: ["jid": "\(item.jid)", "subscription": "\(item.subscription)"])
        }
        let members = watchedMembers(roster)
        watched.withLock { $0 = members }
        state.withLock { $0.rosterSize = members.count }
        return added
    }
}
