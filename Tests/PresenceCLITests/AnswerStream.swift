import Foundation
import PresenceStore
import PresenceTestSupport

/// A change stream (`/v1/presence/events`) as a test reads it: each event's answer as a JSON object. The stream
/// is closed after `lasting` at the latest, so one that never hears again ends the test instead of waiting
/// between heartbeats for ever.
///
/// A read waits until the service sends an event, for as long as a test waits for one (tens of seconds for a
/// frozen server to be noticed), without holding a thread: ``TestEventStream`` reads asynchronously.
final class AnswerStream: Sendable {
    private let reader: TestEventStream

    init(port: Int, jids: [String], lasting: Duration = TestDeadline.serverCycle) async throws {
        let reader = try await TestEventStream(
            host: "127.0.0.1", port: port,
            path: "/v1/presence/events?" + jids.map { "jid=\($0)" }.joined(separator: "&"))
        self.reader = reader
        DispatchQueue.global().asyncAfter(deadline: .now() + lasting.inSeconds) { reader.close() }
    }

    /// The next event's answer; nil when the stream ended (or was closed).
    func next() async throws -> [String: Any]? {
        let text = try await reader.next()?.data
        return text.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Reads answers until one satisfies `condition`, and returns it; nil when the stream ends first.
    func next(where condition: ([String: Any]) -> Bool) async throws -> [String: Any]? {
        while let answer = try await next() {
            if condition(answer) { return answer }
        }
        return nil
    }

    deinit { reader.close() }
}
