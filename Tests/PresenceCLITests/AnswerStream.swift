import Foundation
import LoopbackHTTP
import PresenceStore
import PresenceTestSupport

/// A change stream (`/v1/presence/events`) as a test reads it: each event's answer as a JSON object. The stream
/// is closed after `lasting` at the latest, so one that never hears again ends the test instead of waiting
/// between heartbeats for ever.
///
/// A read blocks until the service sends an event, for as long as a test waits for one (tens of seconds for a
/// frozen server to be noticed), so it runs on a thread of its own: a test that held one of the two threads of
/// Swift's cooperative pool that long would stall every service running inside the test process.
// @unchecked: the reader is used by one read at a time. `next` is only called by the test that owns the stream,
// which awaits each read before it starts the next, so the thread a read runs on is the only one touching the
// reader until it returns; `closer` is a lock of its own, and `close()` on the reader may come from any thread.
final class AnswerStream: @unchecked Sendable {
    private let reader: ServerSentEventReader
    private let closer: Locked<ServerSentEventReader?>

    init(port: Int, jids: [String], lasting: TimeInterval = 60) throws {
        reader = try ServerSentEventReader(
            host: "127.0.0.1", port: port,
            path: "/v1/presence/events?" + jids.map { "jid=\($0)" }.joined(separator: "&"))
        let closer = Locked<ServerSentEventReader?>(reader)
        self.closer = closer
        DispatchQueue.global().asyncAfter(deadline: .now() + lasting) { closer.withLock { $0?.close() } }
    }

    /// The next event's answer; nil when the stream ended (or was closed).
    func next() async throws -> [String: Any]? {
        let text = try await onAThreadOfItsOwn { try self.reader.next()?.data }
        return text.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Reads answers until one satisfies `condition`, and returns it; nil when the stream ends first.
    func next(where condition: ([String: Any]) -> Bool) async throws -> [String: Any]? {
        while let answer = try await next() {
            if condition(answer) { return answer }
        }
        return nil
    }

    deinit { closer.withLock { $0?.close() } }
}
