import Logging
import PresenceStore
import PresenceTestSupport
import Testing

@testable import PresenceService

/// A change stream's heartbeat, on a clock the test moves: an idle stream gets one once it has been idle for the
/// heartbeat interval, found by a look every quarter of it, so between the interval and a quarter more; a stream
/// something was written to is not idle. Exact to the look, without waiting 15 s.
@Suite("An idle change stream gets a heartbeat between one interval and a quarter more after its last write")
struct HeartbeatTests {
    /// A hub with a 15 s heartbeat on `clock`, its idle sweep running, and one open stream watching everyone.
    private static func hubWithAStream(
        on clock: TestClock
    ) async throws -> (hub: ChangeHub, stream: EventSubscription, sweep: Task<Void, Never>) {
        let hub = ChangeHub(
            storage: DictionaryMemoryStorage(), configuration: EventStreamConfiguration(heartbeat: .seconds(15)),
            logger: Logger(label: "test"), clock: ElapsedClock(clock))
        let stream = EventSubscription(watched: nil, channel: nil, clock: hub.clock) {}
        _ = try #require(hub.subscribe(stream, resumingAfter: nil))
        let sweep = Task { await hub.run() }
        #expect(await clock.waitUntilSleeping())
        return (hub, stream, sweep)
    }

    /// Moves the clock by one look (a quarter of 15 s) and waits until the sweep has looked.
    private static func look(_ clock: TestClock) async {
        clock.advance(by: .milliseconds(3_750))
        #expect(await clock.waitUntilSleeping())
    }

    @Test func anIdleStreamGetsItsHeartbeatAtTheFirstLookPastTheIntervalAndNotBefore() async throws {
        let clock = TestClock()
        let (_, stream, sweep) = try await Self.hubWithAStream(on: clock)
        defer { sweep.cancel() }
        for _ in 1 ... 4 {  // 3.75, 7.5, 11.25 and 15 s: not idle for longer than 15 s yet
            await Self.look(clock)
            #expect(stream.take()?.heartbeat == false, "no heartbeat at \(clock.now.offset)")
        }
        await Self.look(clock)  // 18.75 s
        #expect(stream.take()?.heartbeat == true, "a heartbeat at 18.75 s")
        // The heartbeat is a write: the next one is an interval and a look later, at 37.5 s.
        for _ in 1 ... 4 {
            await Self.look(clock)
            #expect(stream.take()?.heartbeat == false, "no heartbeat at \(clock.now.offset)")
        }
        await Self.look(clock)
        #expect(stream.take()?.heartbeat == true, "a heartbeat at 37.5 s")
    }

    @Test func aStreamWrittenToIsNotIdle() async throws {
        let clock = TestClock()
        let (_, stream, sweep) = try await Self.hubWithAStream(on: clock)
        defer { sweep.cancel() }
        await Self.look(clock)
        await Self.look(clock)  // 7.5 s
        stream.mark(try BareJID("alice@example.test"), sequence: 1)
        #expect(stream.take()?.changes.count == 1, "a change written at 7.5 s")
        for _ in 1 ... 4 {  // up to 22.5 s: idle for 15 s only
            await Self.look(clock)
            #expect(stream.take()?.heartbeat == false, "no heartbeat at \(clock.now.offset)")
        }
        await Self.look(clock)  // 26.25 s
        #expect(stream.take()?.heartbeat == true)
    }

    @Test func stoppingTheSweepEndsEveryStream() async throws {
        let clock = TestClock()
        let (_, stream, sweep) = try await Self.hubWithAStream(on: clock)
        sweep.cancel()
        await sweep.value
        #expect(stream.isFinished)
    }
}
