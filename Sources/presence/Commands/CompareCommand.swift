import ArgumentParser
import Foundation

/// `presence compare`: every storage on the same stream and pressure, side by side, and a verdict.
struct CompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Replay one stream into every storage under the same pressure and compare what each kept.",
        discussion: "Standard input is read once and kept in memory so that every storage gets the same bytes.")

    @Argument(help: "The stream to read: a file, or - for standard input.")
    var input: String

    @OptionGroup var storageOptions: StorageOptions
    @OptionGroup var pressureOptions: PressureOptions
    @OptionGroup var streamOptions: StreamOptions
    @OptionGroup var outputOptions: OutputOptions

    struct Report: Encodable {
        let storages: [ReplayReport]
        let verdict: String
    }

    func run() throws {
        var source = InputSource(path: input)
        var temporary: String?
        defer { if let temporary { unlink(temporary) } }
        let runner = ReplayRunner(storageOptions: storageOptions, pressureOptions: pressureOptions, streamOptions: streamOptions)
        let outcomes: [ReplayOutcome] = try ReplayRunner.exitingIfUnopenable {
            try source.checkReadable()
            if source.isStandardInput {
                // Every storage must see the same bytes: keep standard input in a temporary file.
                let path = try CompareCommand.spool(source)
                temporary = path
                source = InputSource(path: path)
            }
            return try StorageChoice.allCases.map { try runner.run(source, into: $0) }
        }
        let reports = outcomes.map { ReplayReport($0, listing: outputOptions.lostUsers) }
        let verdict = Verdict.make(reports)
        switch outputOptions.format {
        case .json: JSONOutput.print(Report(storages: reports, verdict: verdict))
        case .text: print(CompareText.render(reports, verdict: verdict))
        }
        if outcomes.contains(where: { $0.error != nil }) { throw ExitStatus.malformedInput }
    }

    static func spool(_ source: InputSource) throws -> String {
        var template = Array((NSTemporaryDirectory() + "/presence-compare-XXXXXX").utf8CString)
        let descriptor = mkstemp(&template)
        guard descriptor >= 0 else { throw InputSource.CannotOpen(path: "-", reason: "cannot create a temporary file") }
        defer { close(descriptor) }
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        try source.read { chunk in
            var offset = 0
            while offset < chunk.count {
                let written = write(descriptor, chunk.baseAddress! + offset, chunk.count - offset)
                if written <= 0 { return false }
                offset += written
            }
            return true
        }
        return path
    }
}

/// The storages side by side, for people.
enum CompareText {
    static func render(_ reports: [ReplayReport], verdict: String) -> String {
        var table = TextTable(header: [""] + reports.map(\.storage))
        func row(_ name: String, _ value: (ReplayReport) -> String) { table.rows.append([name] + reports.map(value)) }
        row("users") { Format.count($0.users) }
        row("retained") { Format.count($0.retained) }
        row("lost") { Format.count($0.lost) }
        row("stale") { Format.count($0.stale) }
        row("loss rate") { Format.percent($0.lossRate) }
        row("evictions") { Format.count($0.evictions.values.reduce(0, +)) }
        row("pressure events") { Format.count($0.pressureEvents.count) }
        row("storage bytes (est.)") { Format.bytes($0.storageEstimatedBytes) }
        row("stanzas/s") { Format.count($0.stanzasPerSecond) }
        row("peak resident") { $0.peakResidentBytes.value.map(Format.bytes) ?? "unknown" }
        var lines = [table.render()]
        if let first = reports.first {
            lines.insert("\(Format.count(first.stanzas)) stanzas, \(Format.count(first.presenceUpdates)) presence updates, "
                         + "\(Format.count(first.ignored.total)) ignored, \(Format.count(first.rejected.total)) rejected", at: 0)
            if let error = first.error.value {
                lines.append("stream error: \(error.condition) at line \(error.line), column \(error.column): \(error.message); "
                             + "everything before it was applied")
            }
        }
        for report in reports where !report.notApplicable.isEmpty {
            lines.append("not applicable to \(report.storage): " + report.notApplicable.map { "--\($0)" }.joined(separator: ", "))
        }
        for note in Set(reports.flatMap(\.notes)).sorted() { lines.append("note: \(note)") }
        lines.append("verdict: " + verdict)
        return lines.joined(separator: "\n")
    }
}

/// One line a person can act on.
enum Verdict {
    static func make(_ reports: [ReplayReport]) -> String {
        guard let dictionary = reports.first(where: { $0.storage == "dictionary" }) else { return "no dictionary run to compare with" }
        let losers = reports.filter { $0.lost + $0.stale > 0 }
        let size = Format.bytes(dictionary.storageEstimatedBytes)
        if dictionary.users == 0 { return "no presence updates: nothing to compare" }
        if losers.isEmpty {
            return "no storage lost a status here; keep the dictionary (\(size) for \(Format.count(dictionary.users)) users): "
                + "an evicting cache saves nothing until its limits or memory pressure bite"
        }
        let damage = losers.map { "\($0.storage) lost \(Format.count($0.lost)) (\(Format.percent($0.lossRate)))"
            + ($0.stale > 0 ? " and showed \(Format.count($0.stale)) stale" : "") }.joined(separator: ", ")
        let overBudget = dictionary.pressureEvents.contains { $0.overBudget }
        if overBudget {
            return "\(damage); the dictionary kept all \(Format.count(dictionary.users)) users but went over the memory budget "
                + "(\(size)): raise the budget, or accept those losses and show them as unknown"
        }
        return "\(damage) of \(Format.count(dictionary.users)) users; the dictionary kept every status in \(size): use the dictionary"
    }
}
