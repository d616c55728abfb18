import Foundation
import Logging
import PresenceIngest
import PresenceModel
import PresenceStore
import XMPPClient
import XMPPStream

/// One logged-in session: its stanzas dispatched (roster pushes, presence, the answers to the snapshot's questions)
/// until the connection ends.
extension XMPPPresenceSource {
    /// One logged-in session: the roster, the initial presence and its snapshot, then live presence and roster
    /// pushes until the connection ends (or the task is cancelled: the stream is then closed politely).
    func consume(_ session: XMPPSession, roster: inout [BareJID: RosterItem]) async throws {
        let confirmations = self.confirmations
        sessionPings.withLock { $0 = session.keepAlivePings }
        defer {
            pendingProbes.close()
            confirmations.reset()
            resyncCandidates.reset()
            state.withLock {
                $0.readLimit = nil
                $0.sessionDirectoryError = nil
            }
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
        let (directoryQuestions, askDirectory) = AsyncStream.makeStream(
            of: Void.self, bufferingPolicy: .bufferingNewest(1))
        defer { askDirectory.finish() }
        try await session.send(RosterQuery.request(id: "roster-1"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await self.settleAnswers(sender: sender) }
            if let sessionDirectory {
                group.addTask { await self.askSessionDirectory(sessionDirectory, whenDue: directoryQuestions) }
            }
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
                        if confirmations.isDirectoryQuestionDue { askDirectory.yield() }
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
                        let question = writer.bytes + IQ.ping(id: id)
                        confirmations.written(id, bytes: question.count, members: added.count)
                        try await session.send(question)
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
}
