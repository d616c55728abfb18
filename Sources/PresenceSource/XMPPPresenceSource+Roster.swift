import Foundation
import Logging
import PresenceIngest
import PresenceModel
import PresenceStore
import XMPPClient
import XMPPStream

/// The roster: who the watcher receives presence from, replaced at each session and changed by pushes.
extension XMPPPresenceSource {
    /// The roster members whose presence the server delivers; never the watcher's own account, whose presences
    /// (its other sessions) are not a member's status.
    func watchedMembers(_ roster: [BareJID: RosterItem]) -> Set<BareJID> {
        Set(
            roster.values.lazy.filter { $0.subscription.deliversContactPresence && $0.jid != self.configuration.account }
                .map(\.jid))
    }

    /// A new roster from the server: members no longer on it are forgotten (`unknown`: nobody watches them).
    func replaceRoster(_ roster: inout [BareJID: RosterItem], with items: [RosterItem]) {
        let new = Dictionary(items.map { ($0.jid, $0) }, uniquingKeysWith: { _, last in last })
        for removed in roster.keys where new[removed] == nil {
            storage.remove(removed)
            partial.withLock { _ = $0.remove(removed) }
        }
        roster = new
        let members = watchedMembers(roster)
        watched.withLock { $0 = members }
        state.withLock { $0.rosterSize = members.count }
        logger.info("roster received", metadata: ["items": "\(items.count)", "watched": "\(members.count)"])
    }

    /// Applies a roster push; returns the members whose presence the watcher now receives and did not before.
    /// Members it no longer receives are forgotten: their entries, and any question still waiting for them.
    func applyPush(_ items: [RosterItem], to roster: inout [BareJID: RosterItem]) -> Set<BareJID> {
        let before = watched.withLock { $0 }
        for item in items {
            if item.subscription == .remove {
                roster[item.jid] = nil
                storage.remove(item.jid)
            } else {
                roster[item.jid] = item
            }
            logger.info("roster push", metadata: ["jid": "\(item.jid)", "subscription": "\(item.subscription)"])
        }
        let members = watchedMembers(roster)
        watched.withLock { $0 = members }
        state.withLock { $0.rosterSize = members.count }
        let gone = before.subtracting(members)
        for member in gone { storage.remove(member) }
        partial.withLock { $0.subtract(gone) }
        confirmations.forget(gone)
        resyncCandidates.forget(gone)
        return members.subtracting(before)
    }
}
