import PresenceModel
import PresenceStore

/// Makes a storage agree with a completed snapshot of roster members (see ``SnapshotBarrier``).
///
/// A member the server reported nothing for has no available resource: it is set `offline` (a known state),
/// unless it already is. A member the server reported keeps exactly the reported resources: one stored from
/// before a disconnection and not reported again went away while the watcher was not looking.
package enum SnapshotReconciliation {
    /// Applies the snapshot; returns how many members were set offline.
    @discardableResult
    package static func apply(
        members: Set<BareJID>, reported: [BareJID: Set<String>], to storage: any MemoryStorage, at now: PresenceTime
    ) -> Int {
        var offline = 0
        for member in members {
            let resources = reported[member] ?? []
            let stored = storage.lookup(member)
            if resources.isEmpty {
                if case .present(let presence) = stored, presence.status?.isAvailable == false { continue }
                storage.apply(
                    PresenceUpdate(from: JID(bare: member, resource: nil), availability: .unavailable), receivedAt: now)
                offline += 1
            } else if case .present(let presence) = stored {
                // A resource-less presence cannot be withdrawn alone: an unavailable from the bare JID ends them all.
                for resource in presence.availableResources
                where !resource.resource.isEmpty && !resources.contains(resource.resource) {
                    storage.apply(
                        PresenceUpdate(
                            from: JID(bare: member, resource: resource.resource), availability: .unavailable),
                        receivedAt: now)
                }
            }
        }
        return offline
    }
}
