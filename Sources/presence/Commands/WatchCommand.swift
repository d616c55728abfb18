import ArgumentParser
import Foundation
import NIOCore
import PresenceStore
import PresenceWire
import ServerSentEvents

/// `presence watch --server URL <jid>...`: each change of the given people's status as it happens, from the
/// service's change stream, reconnecting on its own.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print each change of the given JIDs' status as it happens (GET /v1/presence/events).",
        discussion: """
            Starts with every JID's current status, then one line (or one JSON object) per change. Reconnects \
            after a dropped connection, resuming where it left off, and while the service is unavailable (503: a \
            replica not ready yet or at its stream limit; 502 or 504 from a balancer). Any other refusal ends it \
            with its reason. Ctrl-C ends it with exit code 0.
            """)

    @Option(
        name: .customLong("server"),
        help: "The service's query API, e.g. http://127.0.0.1:8080 or https://presence.corp.example:8443.")
    var server: ServerAddress

    @OptionGroup var access: ClientAccessOptions

    @Option(name: .customLong("format"), help: "text (one line per change) or json (one object per line).")
    var format: OutputFormat = .text

    @Option(name: .customLong("reconnect-delay"), help: "Seconds to wait before reconnecting (default 1).")
    var reconnectDelay: Double = 1

    @Argument(help: "Bare JIDs to watch; none watches every change.")
    var jids: [String] = []

    func validate() throws {
        for jid in jids {
            do { _ = try JID(jid) } catch { throw ValidationError("'\(jid)' is not a valid JID: \(error)") }
        }
        guard reconnectDelay.isFinite, reconnectDelay >= 0 else {
            throw ValidationError("--reconnect-delay must be a number of seconds")
        }
    }

    func run() async throws {
        // Ctrl-C is how a watch ends: exit 0. Every line is flushed as written, so nothing is lost.
        signal(SIGINT) { _ in _exit(0) }
        let path =
            "/v1/presence/events"
            + (jids.isEmpty
                ? ""
                : "?"
                    + jids.map { "jid=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0) }
                    .joined(separator: "&"))
        let headers = try access.headers() + [("Accept", "text/event-stream")]
        let tls = try access.tlsConfiguration(for: server)
        var lastEventID: String?
        var connectedOnce = false
        while true {
            do {
                let response = try await ServiceClient.get(
                    path, on: server, headers: headers + (lastEventID.map { [("Last-Event-ID", $0)] } ?? []), tls: tls,
                    timeout: ServiceClient.readTimeout)
                let status = Int(response.status.code)
                guard status == 200 else {
                    if status == 401 {
                        throw ValidationFailure("the service needs a valid bearer token (--token-file)")
                    }
                    // The reason, if it can be read; a refusal stays what it is either way.
                    let body = String(buffer: (try? await response.body.collect(upTo: 1 << 20)) ?? ByteBuffer())
                    // Unavailable for now: a replica that is not ready yet or at its stream limit (503), a balancer
                    // with no replica up (502) or none answering in time (504). Wait, as for a dropped stream.
                    // Anything else the service refuses stays refused.
                    guard [502, 503, 504].contains(status) else {
                        throw ValidationFailure("the service answered \(status): \(body)")
                    }
                    throw Unavailable(status: status, body: body)
                }
                if connectedOnce { note("reconnected to \(server.host):\(server.port)") }
                connectedOnce = true
                for try await event in response.body.serverSentEvents(maximumEventBytes: access.maxAnswerBytes.bytes) {
                    if let id = event.id { lastEventID = id }
                    guard event.name == "presence" else { continue }
                    show(event.data)
                }
                note("the service ended the stream; reconnecting")
            } catch let failure as ValidationFailure {
                throw failure
            } catch is ServerSentEventParser.EventTooLarge {
                throw access.answerTooLarge()
            } catch {
                note("\(error); reconnecting in \(reconnectDelay) s")
            }
            try await Task.sleep(for: .seconds(reconnectDelay))
        }
    }

    private func show(_ data: String) {
        switch format {
        case .json:
            print(data)
        case .text:
            guard let result = try? JSONDecoder().decode(PresenceQueryResult.self, from: Data(data.utf8)) else {
                print(data)
                break
            }
            print(WatchText.line(result, at: Date()))
        }
        fflush(nil)
    }

    /// A 502, 503 or 504 answer: the service, or every replica behind the balancer, cannot stream now.
    private struct Unavailable: Error, CustomStringConvertible {
        let status: Int
        let body: String
        var description: String { "the service is unavailable (\(status)): \(body.isEmpty ? "no reason given" : body)" }
    }

    private func note(_ text: String) {
        FileHandle.standardError.write(Data("presence watch: \(text)\n".utf8))
    }
}

/// One change for people: time, JID, state and what a screen shows.
enum WatchText {
    static func line(_ result: PresenceQueryResult, at date: Date) -> String {
        var parts = [date.formatted(.iso8601), result.jid, result.state.rawValue]
        if let show = result.show { parts.append(show.rawValue) }
        if let attendance = result.attendance { parts.append("(\(attendance.rawValue))") }
        if let status = result.status { parts.append("\"\(status.replacing(/[\n\r\t]/, with: " "))\"") }
        if let cause = result.cause { parts.append("cause: \(cause.rawValue)") }
        if result.live == false { parts.append("[not live]") }
        return parts.joined(separator: " ")
    }
}
