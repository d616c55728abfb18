import NIOCore
import NIOEmbedded
import PresenceModel
import PresenceTestSupport
import Testing

@testable import XMPPClient

/// The keep-alive's bounds, exact to the millisecond on an event loop whose clock the test moves
/// (`EmbeddedEventLoop`): what a real server's freeze shows only approximately, and only on an idle machine.
@Suite("Keep-alive: a ping after the interval's silence, dead after interval and timeout, not one tick before")
struct KeepAliveTests {
    /// A monitor on `loop`, the server's last byte at the loop's present, and what it did.
    private static func watch(
        _ keepAlive: KeepAlive, on loop: EmbeddedEventLoop
    ) -> (lastReceived: Locked<NIODeadline>, pings: Recorder<String>, dead: Recorder<Duration>, task: RepeatedTask) {
        let lastReceived = Locked(loop.now)
        let pings = Recorder<String>()
        let dead = Recorder<Duration>()
        let monitor = KeepAliveMonitor(
            keepAlive: keepAlive, lastReceived: lastReceived, ping: { pings.append($0) }, dead: { dead.append($0) })
        return (lastReceived, pings, dead, monitor.start(on: loop))
    }

    @Test func aSilentServerIsPingedAtTheIntervalAndGivenUpAtIntervalPlusTimeout() {
        let loop = EmbeddedEventLoop()
        let watched = Self.watch(KeepAlive(), on: loop)  // 10 s and 10 s, checked every second
        loop.advanceTime(by: .milliseconds(9_999))
        #expect(watched.pings.all.isEmpty, "no ping before 10 s of silence")
        loop.advanceTime(by: .milliseconds(1))
        #expect(watched.pings.all == [KeepAliveMonitor.pingID(1)], "one ping at 10 s")
        loop.advanceTime(by: .milliseconds(9_999))
        #expect(watched.dead.all.isEmpty, "alive until 20 s")
        #expect(watched.pings.all.count == 1, "one ping per silence, not one per check")
        loop.advanceTime(by: .milliseconds(1))
        #expect(watched.dead.all == [.seconds(20)], "dead at 20 s of silence")
        loop.advanceTime(by: .seconds(60))
        #expect(watched.dead.all.count == 1, "given up once: the checks stop")
    }

    @Test func anyByteFromTheServerStartsTheSilenceAgain() {
        let loop = EmbeddedEventLoop()
        let watched = Self.watch(KeepAlive(), on: loop)
        loop.advanceTime(by: .seconds(15))
        #expect(watched.pings.all.count == 1)
        // The answer to the ping (or anything else) arrives at 15 s.
        watched.lastReceived.withLock { $0 = loop.now }
        loop.advanceTime(by: .milliseconds(9_999))
        #expect(watched.pings.all.count == 1, "the silence counts from the last byte")
        loop.advanceTime(by: .milliseconds(1))
        #expect(watched.pings.all == [KeepAliveMonitor.pingID(1), KeepAliveMonitor.pingID(2)], "a second ping at 25 s")
        loop.advanceTime(by: .milliseconds(9_999))
        #expect(watched.dead.all.isEmpty, "not at 20 s from the start: 20 s from the last byte")
        loop.advanceTime(by: .milliseconds(1))
        #expect(watched.dead.all == [.seconds(20)])
    }

    @Test func aShortKeepAliveIsCheckedOftenEnoughToKeepItsBounds() {
        let loop = EmbeddedEventLoop()
        let keepAlive = KeepAlive(interval: .milliseconds(500), timeout: .seconds(2))
        #expect(keepAlive.checkPeriod == .milliseconds(50))
        let watched = Self.watch(keepAlive, on: loop)
        loop.advanceTime(by: .milliseconds(499))
        #expect(watched.pings.all.isEmpty)
        loop.advanceTime(by: .milliseconds(1))
        #expect(watched.pings.all.count == 1)
        loop.advanceTime(by: .milliseconds(1_999))
        #expect(watched.dead.all.isEmpty)
        loop.advanceTime(by: .milliseconds(1))
        #expect(watched.dead.all == [.milliseconds(2_500)])
    }

    @Test func aCancelledMonitorNeverJudges() {
        let loop = EmbeddedEventLoop()
        let watched = Self.watch(KeepAlive(), on: loop)
        watched.task.cancel()
        loop.advanceTime(by: .seconds(60))
        #expect(watched.pings.all.isEmpty && watched.dead.all.isEmpty)
    }
}
