import PresenceStore
import PresenceWire

/// The replay report for people.
enum ReplayText {
    static func render(_ report: ReplayReport) -> String {
        var table = TextTable(alignValuesRight: false)
        table.rows = [
            ["storage", report.storage],
            ["stanzas", Format.count(report.stanzas)],
            ["presence updates", Format.count(report.presenceUpdates)],
            ["ignored", Format.count(report.ignoredTotal) + reasons(report.ignored)],
            ["rejected", Format.count(report.rejectedTotal) + reasons(report.rejected)],
            ["users", Format.count(report.users)],
            ["retained", Format.count(report.retained)],
            ["lost", Format.count(report.lost)],
            ["stale", Format.count(report.stale)],
            ["loss rate", Format.percent(report.lossRate)],
            [
                "refill cost",
                report.refillProbes.map {
                    "\(Format.count($0)) probes to read everyone once with cache-else-probe"
                } ?? "not measured",
            ],
            ["evictions", report.evictions.isEmpty ? "none" : reasons(report.evictions).trimmingPrefix(" ")],
            ["pressure events", pressureSummary(report.pressureEvents)],
            [
                "storage size",
                "\(Format.count(report.storageEntries)) users, \(Format.bytes(report.storageEstimatedBytes)) (estimated)",
            ],
            [
                "throughput",
                "\(Format.count(report.stanzasPerSecond)) stanzas/s (\(Format.bytes(report.bytes)) in \(Format.seconds(report.elapsedSeconds)))",
            ],
            ["peak resident memory", report.peakResidentBytes.map(Format.bytes) ?? "unknown"],
        ]
        var lines = [table.render()]
        if !report.notApplicable.isEmpty {
            lines.append(
                "not applicable to \(report.storage): " + report.notApplicable.map { "--\($0)" }.joined(separator: ", ")
            )
        }
        for note in report.notes { lines.append("note: \(note)") }
        if !report.lostUsers.isEmpty {
            let more =
                report.lost > report.lostUsers.count
                ? " (first \(report.lostUsers.count) of \(Format.count(report.lost)))" : ""
            lines.append("lost users\(more): " + report.lostUsers.joined(separator: ", "))
        }
        if !report.staleUsers.isEmpty {
            lines.append("stale users: " + report.staleUsers.joined(separator: ", "))
        }
        if let error = report.error {
            lines.append(
                "stream error: \(error.condition) at \(Format.position(error, withByteOffset: true)): \(error.message); "
                    + "the \(Format.count(report.presenceUpdates)) updates before it were applied")
        }
        return lines.joined(separator: "\n")
    }

    static func reasons(_ counts: [String: Int]) -> String {
        guard !counts.isEmpty else { return "" }
        return " ("
            + counts.sorted { $0.key < $1.key }.map { "\($0.key) \(Format.count($0.value))" }.joined(separator: ", ")
            + ")"
    }

    static func pressureSummary(_ events: [PressureEventReport]) -> String {
        guard !events.isEmpty else { return "none" }
        let evicted = events.reduce(0) { $0 + $1.evicted }
        let overBudget = events.contains { $0.overBudget } ? ", over budget" : ""
        return "\(Format.count(events.count)), \(Format.count(evicted)) users dropped\(overBudget)"
    }
}

extension String {
    func trimmingPrefix(_ prefix: String) -> String { hasPrefix(prefix) ? String(dropFirst(prefix.count)) : self }
}
