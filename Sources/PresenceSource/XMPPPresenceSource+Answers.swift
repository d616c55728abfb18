import Foundation
import Logging
import PresenceIngest
import PresenceModel
import PresenceStore
import XMPPClient
import XMPPStream

/// The confirmation rounds: the server's answers about members made certain, written to the storage, and the rounds
/// they complete ended.
extension XMPPPresenceSource {
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
