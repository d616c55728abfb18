import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import PresenceService

/// The request head's deadline (`--header-timeout`), exact to the millisecond on an event loop whose clock the test
/// moves (`EmbeddedEventLoop`); HTTPLimitsTests shows the same against the running service.
@Suite("A request head must arrive whole within the header timeout, counted from the connection or the last answer")
struct RequestHeadTimeoutTests {
    private static let timeout = Duration.milliseconds(600)

    /// A connection's deadline on a loop whose clock the test moves, told as the service's handler tells it.
    private final class Connection {
        let loop = EmbeddedEventLoop()
        let deadline: RequestHeadDeadline
        var isActive = true

        init() {
            deadline = RequestHeadDeadline(timeout: RequestHeadTimeoutTests.timeout, eventLoop: loop)
            deadline.start { [unowned self] in self.isActive = false }
        }

        func advanceTime(by amount: TimeAmount) { loop.advanceTime(by: amount) }
    }

    @Test func aConnectionWithoutAWholeHeadIsClosedAtTheDeadlineNotOneTickBefore() throws {
        let connection = Connection()
        connection.advanceTime(by: .milliseconds(599))
        #expect(connection.isActive)
        connection.advanceTime(by: .milliseconds(1))
        #expect(!connection.isActive, "closed at 600 ms")
    }

    @Test func aRequestBeingAnsweredIsNeverTimedOutAndTheNextHeadHasTheWholeTimeoutFromTheAnswersEnd() throws {
        let connection = Connection()
        connection.advanceTime(by: .milliseconds(500))
        connection.deadline.headArrived()
        // Answering takes as long as it takes (a change stream runs for hours).
        connection.advanceTime(by: .seconds(3_600))
        #expect(connection.isActive, "silent while the request is answered")
        connection.deadline.answerEnded()
        connection.advanceTime(by: .milliseconds(599))
        #expect(connection.isActive, "the kept-alive connection's next head has 600 ms from the answer's end")
        connection.advanceTime(by: .milliseconds(1))
        #expect(!connection.isActive)
    }

    @Test func aTimerThatFiresMidWaitIsSetAgainForTheRestOfIt() throws {
        let connection = Connection()
        // The connection's first timer is due at 600 ms; the request at 100 ms and its answer's end at 300 ms
        // start the next wait at 300 ms, so the timer finds 300 ms of it left and waits those.
        connection.advanceTime(by: .milliseconds(100))
        connection.deadline.headArrived()
        connection.advanceTime(by: .milliseconds(200))
        connection.deadline.answerEnded()
        connection.advanceTime(by: .milliseconds(599))
        #expect(connection.isActive, "899 ms: 599 ms into the second wait")
        connection.advanceTime(by: .milliseconds(1))
        #expect(!connection.isActive, "900 ms: 600 ms after the answer's end")
    }

    @Test func aHeadThatArrivesJustInTimeKeepsTheConnection() throws {
        let connection = Connection()
        connection.advanceTime(by: .milliseconds(599))
        connection.deadline.headArrived()
        connection.advanceTime(by: .seconds(10))
        #expect(connection.isActive)
        connection.deadline.stop()
    }
}
