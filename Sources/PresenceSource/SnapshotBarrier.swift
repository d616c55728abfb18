import PresenceModel

/// Knows when the server has said everything about a set of contacts, and who it said nothing about.
///
/// RFC 6121 gives no end marker for the presences a server sends after a client's initial presence. A server
/// handles one client's stanzas in order, so the answer to a ping sent right after the initial presence (or
/// after a probe) arrives after every presence the server produced for it: for contacts on the same server, the
/// whole snapshot. A contact the snapshot did not mention has no available resource.
struct SnapshotBarrier {
    /// The contacts a barrier waits for, and the resources seen available for each since it began.
    private var open: [String: (members: Set<BareJID>, seen: [BareJID: Set<String>])] = [:]

    var isEmpty: Bool { open.isEmpty }

    /// Starts waiting for `members`; the barrier completes when the ping with `id` is answered.
    mutating func begin(id: String, members: Set<BareJID>) {
        open[id] = (members, [:])
    }

    /// Records an applied update for every open barrier that waits for its sender.
    mutating func record(_ update: PresenceUpdate) {
        guard !open.isEmpty else { return }
        let bare = update.from.bare
        for id in open.keys where open[id]!.members.contains(bare) {
            switch update.availability {
            case .available:
                open[id]!.seen[bare, default: []].insert(update.from.resource ?? "")
            case .unavailable:
                if let resource = update.from.resource {
                    open[id]!.seen[bare]?.remove(resource)
                } else {
                    open[id]!.seen[bare] = nil
                }
            }
        }
    }

    /// Whether barrier `id` is open and waits for `member`.
    func waits(id: String, for member: BareJID) -> Bool {
        open[id]?.members.contains(member) ?? false
    }

    /// Ends the barrier: its members, and the resources the server reported available for each.
    mutating func complete(id: String) -> (members: Set<BareJID>, seen: [BareJID: Set<String>])? {
        open.removeValue(forKey: id)
    }
}
