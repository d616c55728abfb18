import PresenceSource
import PresenceStore
import PresenceTestSupport
import Testing

/// What a snapshot means for members a server says nothing about (ejabberd, unlike Prosody, sends nothing for
/// an offline contact), and for resources that went away while the watcher was disconnected.
@Suite("Reconciling the storage with a roster snapshot")
struct SnapshotReconciliationTests {
    @Test func silentMembersBecomeOfflineAndUnreportedResourcesGo() {
        let storage = DictionaryMemoryStorage()
        storage.apply(available("ann@corp.example/desk", priority: 5), receivedAt: time(0))
        storage.apply(available("ann@corp.example/phone", priority: 9, status: "on the train"), receivedAt: time(1))
        storage.apply(available("ben@corp.example/desk"), receivedAt: time(2))
        storage.apply(unavailable("cid@corp.example/desk", status: "gone home"), receivedAt: time(3))
        let offline = SnapshotReconciliation.apply(
            members: [
                jid("ann@corp.example"), jid("ben@corp.example"), jid("cid@corp.example"), jid("dee@corp.example"),
            ],
            reported: [jid("ann@corp.example"): ["desk"]], to: storage, at: time(10))

        #expect(offline == 2, "ben (stuck available) and dee (never seen); cid already was offline")
        let ann = storage.get(jid("ann@corp.example"))
        #expect(ann?.availableResources.map(\.resource) == ["desk"])
        #expect(ann?.status?.isAvailable == true)
        #expect(storage.get(jid("ben@corp.example"))?.status?.isAvailable == false)
        #expect(storage.get(jid("dee@corp.example"))?.status?.isAvailable == false)
        let cid = storage.get(jid("cid@corp.example"))?.status?.presence
        #expect(cid?.details.status == "gone home", "an offline member keeps its last status and time")
        #expect(cid?.updatedAt == time(3))
        #expect(storage.lookup(jid("eve@corp.example")) == .unknown, "outside the roster stays unknown")
    }
}
