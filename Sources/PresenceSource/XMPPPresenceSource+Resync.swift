import Foundation
import Logging
import PresenceIngest
import PresenceModel
import PresenceStore
import XMPPClient
import XMPPStream

/// The periodic resync: every member heard available (or every member) asked again at a bounded rate, and the
/// statuses the server no longer held counted as they are corrected.
extension XMPPPresenceSource {
    /// Asks the server about every member again, `configuration.membersPerSecond` at most, every
    /// `configuration.interval`, until the session ends. Each batch is a round like a roster addition's: probes,
    /// then a ping, then last activity for those the server says nothing of; each certain answer is reconciled as
    /// the snapshot's are. Only a live session resyncs: the snapshot already asks everyone.
    func resyncPeriodically(_ configuration: ResyncConfiguration, sender: XMPPStanzaSender) async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: configuration.interval) } catch { return }
            guard isLive else { continue }
            let started = ContinuousClock.now
            let members = membersToResync(configuration.members)
            logger.info("resync begins", metadata: ["members": "\(members.count)"])
            var rounds: [String] = []
            for start in stride(from: 0, to: members.count, by: configuration.batchSize) {
                let batch = Set(members[start ..< min(start + configuration.batchSize, members.count)])
                let id = confirmations.open(.resync, members: batch)
                rounds.append(id)
                var writer = XMPPWriter()
                for member in batch { writer.presence(type: "probe", to: member.rawValue) }
                let question = writer.bytes + IQ.ping(id: id)
                confirmations.written(id, bytes: question.count, members: batch.count)
                do {
                    try await sender.send(question)
                    try await Task.sleep(for: configuration.batchInterval)
                    // The next batch waits until the server has read this one: a server that reads the watcher at
                    // a limited rate is asked at that rate, never handed a backlog.
                    let readBy = ContinuousClock.now + answering.reaskInterval
                    while !confirmations.hasRead(id) && ContinuousClock.now < readBy {
                        try await Task.sleep(for: .milliseconds(20))
                    }
                } catch { return }
            }
            // Done when every batch's answers are all certain (a member who left the roster meanwhile counts as
            // answered): the duration is what a resync costs, probes and answers. Members the server still has
            // not answered for after the re-asking interval twice over are left to the next resync.
            let giveUp = ContinuousClock.now + answering.reaskInterval * 2
            while rounds.contains(where: { confirmations.isOpen($0) }) && ContinuousClock.now < giveUp {
                do { try await Task.sleep(for: .milliseconds(20)) } catch { return }
            }
            for id in rounds { confirmations.close(id) }
            let took = ContinuousClock.now - started
            let corrected = state.withLock { state in
                state.resyncs += 1
                state.resyncProbed += members.count
                state.lastResyncDuration = took
                return state.resyncCorrected
            }
            logger.info(
                "resync complete",
                metadata: ["members": "\(members.count)", "took": "\(took)", "correctedSoFar": "\(corrected)"])
        }
    }

    /// The watched members a resync asks, in the order of their JIDs (so a member keeps about the same place in
    /// every pass): all of them, or those heard available and not confirmed offline since.
    func membersToResync(_ which: ResyncConfiguration.Members) -> [BareJID] {
        let members = watched.withLock { $0 }
        let asked = which == .all ? members : resyncCandidates.current(among: members)
        return asked.sorted { $0.rawValue < $1.rawValue }
    }

    /// Whether the storage shows `member` with an available resource (the shown presence only: an encoded
    /// storage reads it in place).
    func isShownAvailable(_ member: BareJID) -> Bool {
        storage.withShownPresence(member) { if case .present(let shown?) = $0 { shown.isAvailable } else { false } }
    }

    /// Notes, before an update is applied, whether it is the server's answer to a resync that a member shown
    /// available has no resource at all: a status the server no longer held, counted when the answer is final.
    func noteResyncCorrection(_ update: PresenceUpdate) {
        let member = update.from.bare
        guard update.from.resource == nil, update.availability == .unavailable, isShownAvailable(member) else { return }
        _ = confirmations.noteShownAvailable(member, for: .resync)
    }

    func countResyncCorrection(of member: BareJID) {
        state.withLock { $0.resyncCorrected += 1 }
        logger.notice("resync corrected a status the server no longer holds", metadata: ["jid": "\(member)"])
    }
}
