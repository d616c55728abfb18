import Foundation
import PresenceModel
import PresenceTestSupport
import PresenceWire
import ServerSentEvents
import Testing

/// A change stream read over a plain socket, for the tests whose subject is a reader that stops reading: between
/// two ``nextAnswer()`` calls nothing is read, so once the socket's buffers are full the service's writes wait, for
/// as long as the test likes. An HTTP client stands for no such reader: it reads ahead into buffers of its own, and
/// its read timeout ends a connection that the test leaves unread.
final class RawEventStream: Sendable {
    private let descriptor: Int32
    private let state = Locked(ReadState())

    /// What has been read and not yet handed out.
    fileprivate struct ReadState {
        var head = true
        var raw: [UInt8] = []
        var chunked = ChunkedBody()
        var parser = ServerSentEventParser()
        var events: [ServerSentEvent] = []
    }

    private init(descriptor: Int32) { self.descriptor = descriptor }

    /// Sends `GET /v1/presence/events<query>`; the head is read with the first event. The socket's receive buffer
    /// is small (16 KiB), so a few hundred kilobytes unread fill the connection, not the megabytes a loopback
    /// socket grows to: the service's writes block sooner, and a loaded machine gets there as fast.
    static func open(_ query: String, port: Int) async throws -> RawEventStream {
        let descriptor = try LoopbackTCP.connect(
            port: port, receiveTimeout: TestDeadline.serverCycle, receiveBufferBytes: 16 * 1024)
        let request = "GET /v1/presence/events\(query) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n"
        try Array(request.utf8).withUnsafeBytes { try LoopbackTCP.sendAll(descriptor, $0) }
        return RawEventStream(descriptor: descriptor)
    }

    /// The next `presence` event's answer, reading only as much as it takes.
    func nextAnswer() async throws -> PresenceQueryResult {
        let descriptor = self.descriptor
        let state = self.state
        let event = try await offPool { () throws -> ServerSentEvent in
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            while true {
                if let event = state.withLock({ $0.events.isEmpty ? nil : $0.events.removeFirst() }),
                    event.name == "presence"
                {
                    return event
                }
                guard state.withLock({ $0.events.isEmpty }) else { continue }
                let count = recv(descriptor, &chunk, chunk.count, 0)
                guard count > 0 else { throw TestFailure("the change stream ended or went silent") }
                state.withLock { $0.take(chunk[..<count]) }
            }
        }
        return try JSONDecoder().decode(PresenceQueryResult.self, from: Data(event.data.utf8))
    }

    func close() { Glibc.close(descriptor) }
}

extension RawEventStream.ReadState {
    /// Takes bytes off the socket: the head is skipped, the chunked body decoded, and its events parsed.
    fileprivate mutating func take(_ bytes: ArraySlice<UInt8>) {
        guard head else {
            events += (try? parser.parse(chunked.decode(bytes))) ?? []
            return
        }
        raw += bytes
        guard let end = raw.firstRange(of: Array("\r\n\r\n".utf8)) else { return }
        head = false
        let body = raw[end.upperBound...]
        raw = []
        events += (try? parser.parse(chunked.decode(body))) ?? []
    }
}

/// `Transfer-Encoding: chunked` undone, as bytes arrive.
private struct ChunkedBody {
    private var pending: [UInt8] = []
    /// Bytes still to come in the current chunk (its CRLF included); nil while a size line is awaited.
    private var remaining: Int?

    mutating func decode(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        pending += bytes
        var data: [UInt8] = []
        while true {
            if let count = remaining {
                guard pending.count >= count else { break }
                data += pending[..<max(0, count - 2)]
                pending.removeFirst(count)
                remaining = nil
            } else {
                guard let line = pending.firstRange(of: Array("\r\n".utf8)) else { break }
                let size = String(decoding: pending[..<line.lowerBound], as: UTF8.self).split(separator: ";").first
                pending.removeFirst(line.upperBound)
                guard let size = size.flatMap({ Int($0, radix: 16) }), size > 0 else { break }
                remaining = size + 2
            }
        }
        return data
    }
}
