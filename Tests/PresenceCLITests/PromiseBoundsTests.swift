import PresenceTestSupport
import Testing
import XMPPClient

@testable import presence

/// The promises about time that follow from the service's defaults alone, checked as arithmetic on the settings:
/// a change of a default that breaks a promise fails here, on any machine, before any server is started.
/// (`Benchmarks/Scripts/promises.sh` measures the promises against real servers.)
@Suite("The service's defaults keep its promises about time")
struct PromiseBoundsTests {
    @Test func theDefaultKeepAliveGivesAFrozenServerUpWithinThePromise() {
        let keepAlive = KeepAlive(
            interval: .seconds(SettingKeys.xmppKeepAlive.defaultValue),
            timeout: .seconds(SettingKeys.xmppDeadTimeout.defaultValue))
        // Given up at the first check at or after interval + timeout of silence.
        let givenUp = keepAlive.interval + keepAlive.timeout + keepAlive.checkPeriod
        #expect(givenUp <= PromiseLog.Promise.frozenServerNoticed, "given up after \(givenUp) of silence")
    }

    @Test func stoppingGivesTheStreamsCloseLessThanThePromise() {
        // The one wait a stop makes for the XMPP server: its close of the stream (`closeGracefully`'s default).
        #expect(XMPPSession.defaultCloseTimeout * 2 <= PromiseLog.Promise.stopped)
    }
}
