import PresenceService
import PresenceSource
import Testing

/// When a replica tells its balancer it is ready (`GET /readyz`), from the state of its XMPP source.
@Suite("Readiness of a replica")
struct ReadinessTests {
    let grace: Duration = .seconds(10)
    let now = ContinuousClock.now

    func status(_ configure: (inout XMPPSourceStatus) -> Void) -> XMPPSourceStatus {
        var status = XMPPSourceStatus(jid: "watcher@example.test", server: "127.0.0.1:5222")
        configure(&status)
        return status
    }

    @Test func aReplicaIsReadyOnlyOnceTheSnapshotIsCompleteAndSaysWhatItWaitsFor() {
        let before = Readiness.of(status { $0.lastError = "cannot connect to 127.0.0.1:5222" }, grace: grace, now: now)
        #expect(!before.isReady)
        #expect(before.reason.contains("not logged in") && !before.reason.contains("127.0.0.1"))
        #expect(before.detail == "cannot connect to 127.0.0.1:5222")
        #expect(before.explanation == "not logged in to the XMPP server (cannot connect to 127.0.0.1:5222)")

        let snapshotting = Readiness.of(
            status {
                $0.connected = true
                $0.snapshotUnconfirmed = 3
            }, grace: grace, now: now)
        #expect(!snapshotting.isReady)
        #expect(snapshotting.reason.contains("3 members unconfirmed"))

        let live = Readiness.of(
            status {
                $0.connected = true
                $0.snapshotComplete = true
                $0.everLive = true
            }, grace: grace, now: now)
        #expect(live.isReady)
    }

    @Test func aReplicaThatLosesItsSessionStaysReadyForTheGracePeriodOnly() {
        func lost(secondsAgo: Int64, connected: Bool) -> Readiness {
            Readiness.of(
                status {
                    $0.everLive = true
                    $0.connected = connected
                    $0.notLiveSince = now - .seconds(secondsAgo)
                }, grace: grace, now: now)
        }
        #expect(lost(secondsAgo: 2, connected: false).isReady)
        #expect(lost(secondsAgo: 2, connected: false).reason.contains("within the grace period"))
        #expect(!lost(secondsAgo: 11, connected: false).isReady)
        // Logged in again but its snapshot not complete yet: the same clock runs.
        #expect(lost(secondsAgo: 9, connected: true).isReady)
        #expect(!lost(secondsAgo: 12, connected: true).isReady)
        #expect(lost(secondsAgo: 12, connected: true).reason.contains("snapshot is not complete"))
    }

    @Test func aReplicaWhoseSessionWasReplacedIsNeverReadyAndSaysHowToFixIt() {
        let replaced = Readiness.of(
            status {
                $0.everLive = true
                $0.replaced = true
                $0.notLiveSince = now
            }, grace: grace, now: now)
        #expect(!replaced.isReady)
        #expect(replaced.reason.contains("--xmpp-resource"))
    }

    @Test func aReplicaWithOnlyTheFeedPortIsReady() {
        #expect(Readiness.of(nil, grace: grace, now: now).isReady)
    }
}
