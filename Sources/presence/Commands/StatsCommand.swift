import ArgumentParser
import Foundation
import PresenceWire

/// `presence stats --server URL`: the running service's statistics.
struct StatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats", abstract: "Show a running service's statistics (GET /v1/stats).")

    @Option(
        name: .customLong("server"),
        help: "The service's query API, e.g. http://127.0.0.1:8080 or https://presence.corp.example:8443.")
    var server: ServerAddress

    @OptionGroup var access: ClientAccessOptions

    @Option(name: .customLong("format"), help: "text or json.")
    var format: OutputFormat = .text

    func run() async throws {
        let body = try await server.get("/v1/stats", access: access)
        switch format {
        case .json:
            FileHandle.standardOutput.write(Data(body))
            FileHandle.standardOutput.write(Data("\n".utf8))
        case .text:
            let stats = try JSONDecoder().decode(ServiceStats.self, from: Data(body))
            var table = TextTable(alignValuesRight: false)
            table.rows = [
                ["storage", stats.storage],
                ["entries", Format.count(stats.entries)],
                ["storage size", "\(Format.bytes(stats.storageEstimatedBytes)) (estimated)"],
                ["lost", Format.count(stats.lost)],
                ["pinned (on screen)", Format.count(stats.pinned)],
                ["change streams", Format.count(stats.eventStreams)],
                [
                    "evictions",
                    stats.evictions.isEmpty ? "none" : ReplayText.reasons(stats.evictions).trimmingPrefix(" "),
                ],
                ["pressure", "\(stats.pressureLevel), \(Format.count(stats.pressureEvents.count)) events"],
                ["resident memory", stats.residentBytes.map(Format.bytes) ?? "unknown"],
                ["feeders connected", Format.count(stats.feedersConnected)],
                ["stanzas read", Format.count(stats.stanzasRead)],
                ["updates applied", Format.count(stats.updatesApplied)],
                ["stream errors", Format.count(stats.streamErrors)],
            ]
            if let source = stats.source {
                table.rows += [
                    ["source", "\(source.kind) \(source.jid) at \(source.server)"],
                    [
                        "connected",
                        source.connected
                            ? "yes since \(source.connectedSince ?? "?")\(source.encrypted ? ", TLS" : ", no TLS")"
                                + (source.live ? "" : ", snapshot in progress")
                            : "no since \(source.disconnectedSince ?? "?"): statuses are as of then",
                    ],
                    ["roster members", Format.count(source.rosterSize)],
                    ["presences received", Format.count(source.presencesReceived)],
                    [
                        "reconnects",
                        "\(Format.count(source.reconnects)) (\(Format.count(source.connectAttempts)) attempts)",
                    ],
                ]
                if source.snapshotUnconfirmed > 0 {
                    table.rows.append(["unconfirmed", "\(Format.count(source.snapshotUnconfirmed)) roster members"])
                }
                if source.partialUsers > 0 {
                    table.rows.append(["partial", "\(Format.count(source.partialUsers)) rebuilt from one resource"])
                }
                if let warning = source.warning { table.rows.append(["warning", warning]) }
                if let error = source.lastError { table.rows.append(["last error", error]) }
            } else {
                table.rows.append(["source", "feed port only"])
            }
            if let disk = stats.disk {
                table.rows += [
                    [
                        "disk tier",
                        "\(Format.count(disk.diskUsers)) users, \(Format.bytes(disk.fileBytes)), "
                            + "\(Format.count(disk.dirtyUsers)) not written yet",
                    ],
                    [
                        "lookups",
                        "\(Format.count(disk.memoryHits)) from memory, \(Format.count(disk.diskHits)) from disk, "
                            + "\(Format.count(disk.misses)) from neither; \(Format.count(disk.spilled)) spilled to disk",
                    ],
                    [
                        "flushes",
                        "\(Format.count(disk.flushes)) (\(Format.count(disk.failedFlushes)) failed), "
                            + "\(Format.count(disk.usersWritten)) users and \(Format.bytes(disk.bytesWritten)) written, "
                            + "last at \(disk.lastFlushAt ?? "-")"
                            + (disk.lastFlushMilliseconds.map { String(format: " in %.1f ms", $0) } ?? ""),
                    ],
                ]
                if disk.restoredUsers > 0 {
                    table.rows.append([
                        "restored", "\(Format.count(disk.restoredUsers)) as of \(disk.restoredAsOf ?? "?"), not confirmed since",
                    ])
                }
                if let error = disk.lastError { table.rows.append(["disk error", error]) }
            }
            if let probes = stats.probes {
                let latency = [probes.latencyP50Milliseconds, probes.latencyP99Milliseconds].map {
                    $0.map { "≤ \(Format.count(Int($0.rounded(.up)))) ms" } ?? "-"
                }
                table.rows += [
                    ["default policy", probes.defaultPolicy],
                    [
                        "probes",
                        "\(Format.count(probes.sent)) sent, \(Format.count(probes.answered)) answered, "
                            + "\(Format.count(probes.timedOut)) timed out, \(Format.count(probes.failed)) failed, "
                            + "\(Format.count(probes.refusedByBudget)) over budget, "
                            + "\(Format.count(probes.joinedInFlight)) joined one in flight",
                    ],
                    ["probe latency", "p50 \(latency[0]), p99 \(latency[1])"],
                ]
            }
            print(table.render())
        }
    }
}
