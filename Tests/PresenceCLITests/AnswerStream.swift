import Foundation
import LoopbackHTTP
import PresenceStore

/// A change stream (`/v1/presence/events`) as a test reads it: each event's answer as a JSON object. The stream
/// is closed after `lasting` at the latest, so one that never hears again ends the test instead of waiting
/// between heartbeats for ever.
final class AnswerStream {
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
    func next() throws -> [String: Any]? {
        try reader.next().flatMap { try? JSONSerialization.jsonObject(with: Data($0.data.utf8)) as? [String: Any] }
    }

    /// Reads answers until one satisfies `condition`, and returns it; nil when the stream ends first.
    func next(where condition: ([String: Any]) -> Bool) throws -> [String: Any]? {
        while let answer = try next() {
            if condition(answer) { return answer }
        }
        return nil
    }

    deinit { closer.withLock { $0?.close() } }
}
