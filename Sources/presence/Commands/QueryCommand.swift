import ArgumentParser
import Foundation
import PresenceStore
import PresenceWire

extension LookupPolicy: ExpressibleByArgument {}

/// `presence query`: replay a stream, then answer for each JID.
struct QueryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Replay a stream into a storage, then show each JID's status: available, offline, unknown or lost.")

    @Option(name: .customLong("input"), help: "The stream to read: a file, or - for standard input.")
    var input: String?

    @Option(
        name: .customLong("server"),
        help: "Ask a running service instead, e.g. http://127.0.0.1:8080 or https://presence.corp.example:8443.")
    var server: ServerAddress?

    @OptionGroup var access: ClientAccessOptions

    @Option(name: .customLong("storage"), help: "\(StorageName.choices).")
    var storage: StorageName = .default

    @OptionGroup var replayOptions: ReplayOptions

    @Option(
        name: .customLong("policy"),
        help: """
            With --server: cache-only, cache-else-probe (refill a lost roster member from the XMPP server) or probe \
            (always ask the server). Default: the service's (cache-else-probe when it has an XMPP source).
            """)
    var policy: LookupPolicy?

    @Option(name: .customLong("format"), help: "text or json.")
    var format: OutputFormat = .text

    @Argument(help: "Bare JIDs to look up (a resource is ignored).")
    var jids: [String]

    func validate() throws {
        guard (input == nil) != (server == nil) else { throw ValidationError("give either --input or --server") }
        guard !jids.isEmpty else { throw ValidationError("give at least one JID") }
        if input != nil, let policy, policy != .cacheOnly {
            throw ValidationError("--policy \(policy) needs --server: a replayed file has no XMPP server to probe")
        }
        for jid in jids {
            do { _ = try JID(jid) } catch { throw ValidationError("'\(jid)' is not a valid JID: \(error)") }
        }
    }

    func run() async throws {
        if let server { return try await ask(server) }
        let outcome = try ReplayRunner(options: try replayOptions.resolved(), audits: false, measuresRefill: false).run(
            path: input ?? "-", into: storage.kind)
        let results = jids.map { text -> PresenceQueryResult in
            let key = (try! JID(text)).bare  // validated in validate()
            return PresenceQueryResult(jid: key, stored: outcome.storage.lookup(key))
        }
        let document = QueryDocument(results: results, error: outcome.error.map(ErrorReport.init))
        switch format {
        case .json: JSONOutput.print(document)
        case .text: print(QueryText.render(document))
        }
        if outcome.error != nil { throw ExitStatus.malformedInput }
    }

    /// Client mode: the same answers from a running service's `GET /v1/presence`.
    private func ask(_ server: ServerAddress) async throws {
        let query =
            jids.map { "jid=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0) }
            .joined(separator: "&") + (policy.map { "&policy=\($0.rawValue)" } ?? "")
        let body = try await server.get("/v1/presence?" + query, access: access)
        let document = try JSONDecoder().decode(QueryDocument.self, from: Data(body))
        switch format {
        case .json: JSONOutput.print(document)
        case .text: print(QueryText.render(document))
        }
    }
}
