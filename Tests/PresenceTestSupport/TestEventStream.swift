import AsyncHTTPClient
import NIOCore
import PresenceModel
import ServerSentEvents

/// A change stream (`text/event-stream`) as a test reads it: the response's status and headers at once, then
/// ``next()`` event by event, through ``TestHTTP``'s async-http-client.
///
/// The body is read by a task of its own, so that ``close()``, from any task, ends the stream while another
/// waits in ``next()``: the waiting read returns, and the connection closes as a client that goes away closes
/// it. Releasing the stream closes it too. That task reads one event for each ``next()`` and nothing ahead, so a
/// test that stops calling ``next()`` is a reader that stops reading: once async-http-client's own buffer and the
/// socket's are full, the service's writes wait, as they wait for a screen that stopped reading.
///
/// The idle timeout (60 s, four heartbeats of the service, unless the test says otherwise) is async-http-client's
/// read timeout: it fails the connection when no bytes have come for that long, whether or not the test is calling
/// ``next()``. A test that stops reading for longer than it, with the buffers full, gets the timeout at its next
/// read; such a test reads over a plain socket instead.
package final class TestEventStream: Sendable {
    package let status: Int
    /// Names lowercased.
    package let headers: [String: String]
    /// The body of a response that is not 200 (an error document); empty for a stream.
    private let refusal: [UInt8]
    private let pump: Task<Void, Never>
    private let reconnectionTime = Locked<Duration?>(nil)
    private let events: EventInbox
    /// One element per ``next()``: the reading task reads an event for each.
    private let demand: AsyncStream<Void>.Continuation

    /// Sends `GET path` with `Accept: text/event-stream`, `Last-Event-ID` when given and any other `headers`,
    /// and returns when the head has come (within `idleTimeout`).
    package init(
        host: String = "127.0.0.1", port: Int, path: String, lastEventID: String? = nil,
        headers: [String: String] = [:], transport: TestTransport = .plain,
        idleTimeout: Duration = TestDeadline.serverCycle
    ) async throws {
        var all = headers
        all["Accept"] = "text/event-stream"
        if let lastEventID { all["Last-Event-ID"] = lastEventID }
        let response = try await TestHTTP.start(
            host: host, port: port, path: path, headers: all, transport: transport, timeout: idleTimeout)
        status = Int(response.status.code)
        self.headers = TestHTTP.lowercased(response.headers)
        let (stream, continuation) = AsyncThrowingStream<ServerSentEvent, any Error>.makeStream()
        events = EventInbox(stream.makeAsyncIterator())
        let (requests, demand) = AsyncStream<Void>.makeStream()
        self.demand = demand
        guard status == 200 else {
            refusal = Array(buffer: (try? await response.body.collect(upTo: 1 << 20)) ?? ByteBuffer())
            continuation.finish()
            pump = Task {}
            return
        }
        refusal = []
        pump = Task { [reconnectionTime] in
            do {
                var iterator = response.body.serverSentEvents.makeAsyncIterator()
                for await _ in requests {
                    guard let event = try await iterator.next() else { break }
                    reconnectionTime.withLock { $0 = iterator.retry }
                    continuation.yield(event)
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
    }

    deinit { pump.cancel() }

    /// The next event (comments and `retry:` skipped); nil when the service ended the stream or it was closed.
    /// Throws when the connection failed or stayed silent past the read timeout.
    package func next() async throws -> ServerSentEvent? {
        demand.yield()
        return try await events.next()
    }

    /// The reconnection time the stream sent (`retry:`) before the last event ``next()`` returned.
    package var retry: Duration? { reconnectionTime.withLock { $0 } }

    /// The whole body of a response that is not a stream (an error document).
    package func remainingBody() -> [UInt8] { refusal }

    /// Closes the connection now; a waiting ``next()`` returns.
    package func close() {
        pump.cancel()
        demand.finish()
    }
}

/// The one reader of a stream's events: an actor, so that the iterator is used by one ``next()`` at a time.
private actor EventInbox {
    private var iterator: AsyncThrowingStream<ServerSentEvent, any Error>.AsyncIterator

    init(_ iterator: AsyncThrowingStream<ServerSentEvent, any Error>.AsyncIterator) { self.iterator = iterator }

    func next() async throws -> ServerSentEvent? {
        var current = iterator
        defer { iterator = current }
        return try await current.next(isolation: self)
    }
}
