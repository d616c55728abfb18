import Foundation
import Glibc
import PresenceStore
import PresenceTestSupport
import PresenceWire
import Testing

/// A JID in a request target means the same on every route that takes one: the query, the change stream and the
/// badge decode it with one decoder (RFC 3986 percent-encoding, a `+` kept as a `+`), and refuse the same escapes.
@Suite("A JID in a request target means the same on every route")
struct JIDDecodingTests {
    /// What the service sends for `GET target`, as the bytes came (no client in between to normalise the target):
    /// to the end for an answer (the connection is closed after it), up to the first event for a stream.
    private func get(_ target: String, port: Int) async throws -> String {
        try await onAThreadOfItsOwn {
            let descriptor = try LoopbackTCP.connect(port: port)
            defer { close(descriptor) }
            let request = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
            try Array(request.utf8).withUnsafeBytes { try LoopbackTCP.sendAll(descriptor, $0) }
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            while true {
                let count = recv(descriptor, &chunk, chunk.count, 0)
                guard count > 0 else { break }
                received += chunk[..<count]
                let text = String(decoding: received, as: UTF8.self)
                if text.contains("text/event-stream") && text.contains("event: presence") { break }
            }
            return String(decoding: received, as: UTF8.self)
        }
    }

    @Test(arguments: [
        ("a+b@example.com", "a+b@example.com"),
        ("alice%40example.com", "alice@example.com"),
        ("Alice@Example.COM%2Fdesk", "alice@example.com"),
        ("%C3%A9lodie@example.com", "élodie@example.com"),
        ("a%4", nil),
        ("%ff%fe@example.com", nil),
        ("bad@@example.com", nil),
    ] as [(String, String?)])
    func aJIDIsReadAlikeByTheQueryTheStreamAndTheBadge(encoded: String, means: String?) async throws {
        try await withService { ports in
            let query = try await get("/v1/presence?jid=\(encoded)", port: ports.http)
            let badge = try await get("/v1/presence/\(encoded)/badge.svg", port: ports.http)
            let stream = try await get("/v1/presence/events?jid=\(encoded)", port: ports.http)
            guard let means else {
                for (route, answer) in [("query", query), ("badge", badge), ("stream", stream)] {
                    #expect(answer.hasPrefix("HTTP/1.1 400") && answer.contains("jid-malformed"), "\(route): \(answer)")
                }
                return
            }
            for (route, answer) in [("query", query), ("stream", stream)] {
                #expect(answer.hasPrefix("HTTP/1.1 200"), "\(route): \(answer)")
                #expect(answer.contains("\"jid\":\"\(means)\""), "\(route) answers for \(means): \(answer)")
            }
            #expect(badge.hasPrefix("HTTP/1.1 200") && badge.contains(means), "the badge names \(means): \(badge)")
        }
    }
}
