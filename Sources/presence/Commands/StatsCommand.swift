import ArgumentParser
import Foundation
import PresenceService

/// `presence stats --server URL`: the running service's statistics.
struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats", abstract: "Show a running service's statistics (GET /v1/stats).")

    @Option(name: .customLong("server"), help: "The service's query API, e.g. http://127.0.0.1:8080.")
    var server: ServerAddress

    @Option(name: .customLong("format"), help: "text or json.")
    var format: OutputFormat = .text

    func run() throws {
        let response = try server.get("/v1/stats")
        switch format {
        case .json:
            FileHandle.standardOutput.write(Data(response.body))
            FileHandle.standardOutput.write(Data("\n".utf8))
        case .text:
            let stats = try JSONDecoder().decode(ServiceStats.self, from: Data(response.body))
            var table = TextTable(alignValuesRight: false)
            table.rows = [
                ["storage", stats.storage],
                ["entries", Format.count(stats.entries)],
                ["storage size", "\(Format.bytes(stats.storageEstimatedBytes)) (estimated)"],
                ["lost", Format.count(stats.lost)],
                ["evictions", stats.evictions.isEmpty ? "none" : ReplayText.reasons(stats.evictions).trimmingPrefix(" ")],
                ["pressure", "\(stats.pressureLevel), \(Format.count(stats.pressureEvents.count)) events"],
                ["resident memory", stats.residentBytes.map(Format.bytes) ?? "unknown"],
                ["feeders connected", Format.count(stats.feedersConnected)],
                ["stanzas read", Format.count(stats.stanzasRead)],
                ["updates applied", Format.count(stats.updatesApplied)],
                ["stream errors", Format.count(stats.streamErrors)],
            ]
            print(table.render())
        }
    }
}

/// `http://host:port` of a running service.
struct ServerAddress: ExpressibleByArgument {
    let host: String
    let port: Int

    init?(argument: String) {
        var rest = Substring(argument)
        if rest.hasPrefix("http://") { rest = rest.dropFirst(7) }
        while rest.hasSuffix("/") { rest = rest.dropLast() }
        guard let address = HostAndPort(argument: String(rest)) else { return nil }
        host = address.host
        port = address.port
    }

    /// GETs a path; a connection failure or a non-200 answer is an error for the user (exit 1 with the reason).
    func get(_ path: String) throws -> LoopbackHTTPClient.Response {
        let response: LoopbackHTTPClient.Response
        do {
            response = try LoopbackHTTPClient.get(host: host, port: port, path: path)
        } catch {
            throw ValidationFailure("cannot reach the service at \(host):\(port): \(error)")
        }
        guard response.status == 200 else {
            throw ValidationFailure("the service answered \(response.status): \(String(decoding: response.body, as: UTF8.self))")
        }
        return response
    }
}

struct ValidationFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
