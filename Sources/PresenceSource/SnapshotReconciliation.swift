import PresenceModel
import PresenceStore

/// Makes a storage agree with what the server reported of a member after a snapshot or a probe: a member
/// reported available keeps exactly the reported resources, since one stored from before a disconnection and
/// not reported again went away while the watcher was not looking.
package enum SnapshotReconciliation {
    /// Keeps exactly `resources` of `member`'s stored available resources: the others went away while the watcher
    /// was not looking (a resource-less presence cannot be withdrawn alone and is left to the next unavailable).
    /// Returns how many stored resources it withdrew.
    @discardableResult
    package static func keepOnly(
        _ resources: Set<String>, of member: BareJID, in storage: any MemoryStorage, at now: PresenceTime
    ) -> Int {
        guard case .present(let presence) = storage.lookup(member) else { return 0 }
        var withdrawn = 0
        for resource in presence.availableResources
        where !resource.resource.isEmpty && !resources.contains(resource.resource) {
            storage.apply(
                PresenceUpdate(from: JID(bare: member, resource: resource.resource), availability: .unavailable),
                receivedAt: now)
            withdrawn += 1
        }
        return withdrawn
    }
}
