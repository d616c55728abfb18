import PresenceModel
import PresenceStore

/// The members a resync of ``ResyncConfiguration/Members/available`` asks: those the watcher has heard available
/// from the server in this session and not heard confirmed offline since.
///
/// Kept from the presences the source receives rather than read back from the storage, so that a resync neither
/// reorders an LRU, nor reads the disk tier, nor counts as lookups. It holds every member shown available
/// through the source, and a few more: a member whose last resource went away one presence at a time stays a
/// candidate until the next resync hears the server confirm them offline, which takes them out.
final class ResyncCandidates: Sendable {
    private let members = Locked<Set<BareJID>>([])

    /// Notes a presence about to be applied: an available one makes its member a candidate; an unavailable one
    /// from the bare JID (no resource at all) ends their candidacy.
    func note(_ update: PresenceUpdate) {
        let member = update.from.bare
        if update.availability == .available {
            members.withLock { _ = $0.insert(member) }
        } else if update.from.resource == nil {
            members.withLock { _ = $0.remove(member) }
        }
    }

    /// The server said `member` has no available resource.
    func confirmedOffline(_ member: BareJID) {
        members.withLock { _ = $0.remove(member) }
    }

    /// Members taken off the roster.
    func forget(_ gone: Set<BareJID>) {
        members.withLock { $0.subtract(gone) }
    }

    /// A new session: its snapshot says again who is available.
    func reset() {
        members.withLock { $0.removeAll() }
    }

    /// The candidates among `watched`.
    func current(among watched: Set<BareJID>) -> Set<BareJID> {
        members.withLock { $0.intersection(watched) }
    }
}
