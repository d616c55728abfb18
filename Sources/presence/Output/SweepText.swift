import PresenceWire

/// A sweep for people: one row per value of the limit, each evicting storage's losses side by side.
enum SweepText {
    static func render(_ report: SweepReport) -> String {
        var table = TextTable(
            header: [report.parameter] + report.series.flatMap { ["\($0.storage) lost", "\($0.storage) stale"] })
        for (index, value) in report.values.enumerated() {
            var row = [SweepText.value(value, of: report)]
            for series in report.series {
                let point = series.points[index]
                row.append("\(Format.count(point.lost)) (\(Format.percent(point.lossRate)))")
                row.append(Format.count(point.stale))
            }
            table.rows.append(row)
        }
        return [
            "\(Format.count(report.users)) users, \(Format.count(report.presenceUpdates)) presence updates",
            table.render(),
            "dictionary: lost \(Format.count(report.dictionaryLost)), "
                + "keeps every user in \(Format.bytes(report.dictionaryEstimatedBytes)) (estimated)",
        ].joined(separator: "\n")
    }

    /// A value of the swept limit as its flag takes it: users, or a size.
    static func value(_ value: Int, of report: SweepReport) -> String {
        report.unit == "bytes" ? Format.bytes(value) : Format.count(value)
    }
}
