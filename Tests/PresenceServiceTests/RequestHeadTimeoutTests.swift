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

    /// A connected channel with the handler, as the service's pipeline has it right after HTTP decoding.
    private static func connection() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(RequestHeadTimeoutHandler(timeout: timeout))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8080)).wait()
        return channel
    }

    private static let head = HTTPServerRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/"))

    @Test func aConnectionWithoutAWholeHeadIsClosedAtTheDeadlineNotOneTickBefore() throws {
        let channel = try Self.connection()
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(599))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive, "closed at 600 ms")
    }

    @Test func aRequestBeingAnsweredIsNeverTimedOutAndTheNextHeadHasTheWholeTimeoutFromTheAnswersEnd() throws {
        let channel = try Self.connection()
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(500))
        try channel.writeInbound(Self.head)
        // Answering takes as long as it takes (a change stream runs for hours).
        channel.embeddedEventLoop.advanceTime(by: .seconds(3_600))
        #expect(channel.isActive, "silent while the request is answered")
        try channel.writeOutbound(HTTPServerResponsePart.end(nil))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(599))
        #expect(channel.isActive, "the kept-alive connection's next head has 600 ms from the answer's end")
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive)
    }

    @Test func aTimerThatFiresMidWaitIsSetAgainForTheRestOfIt() throws {
        let channel = try Self.connection()
        // The connection's first timer is due at 600 ms; the request at 100 ms and its answer's end at 300 ms
        // start the next wait at 300 ms, so the timer finds 300 ms of it left and waits those.
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(100))
        try channel.writeInbound(Self.head)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(200))
        try channel.writeOutbound(HTTPServerResponsePart.end(nil))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(599))
        #expect(channel.isActive, "899 ms: 599 ms into the second wait")
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive, "900 ms: 600 ms after the answer's end")
    }

    @Test func aHeadThatArrivesJustInTimeKeepsTheConnection() throws {
        let channel = try Self.connection()
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(599))
        try channel.writeInbound(Self.head)
        channel.embeddedEventLoop.advanceTime(by: .seconds(10))
        #expect(channel.isActive)
        _ = try channel.finish(acceptAlreadyClosed: true)
    }
}
