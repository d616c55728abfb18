import ArgumentParser
import Foundation
import PresenceDisk
import PresenceStore
import PresenceWire

/// `presence compare`: every storage on the same stream and pressure, side by side, and a verdict.
struct CompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Replay one stream into every storage under the same pressure and compare what each kept.",
        discussion: """
            Standard input is read once into a temporary file so that every storage gets the same bytes. With \
            --sweep, the evicting storages are replayed at --steps values of one limit (log-spaced, in parallel on \
            the machine's cores; memory-budget steps one after another, as the budget is the whole process's), and \
            --chart draws loss and stale rates against the limit as SVG.
            """)

    @Argument(help: "The stream to read: a file, or - for standard input.")
    var input: String

    @OptionGroup var replayOptions: ReplayOptions
    @OptionGroup var outputOptions: OutputOptions

    @Option(
        name: .customLong("sweep"),
        help: "Vary one limit: count-limit=100..20000, cost-limit=1MiB..64MiB or memory-budget=256MiB..2GiB.")
    var sweep: SweepSpecification?

    @Option(name: .customLong("steps"), help: "Values in the sweep, log-spaced (default 12).")
    var steps: Int = 12

    @Flag(
        name: .customLong("with-disk"),
        help: "Also replay each evicting storage with a disk tier under it (KIND+disk), and the disk tier alone.")
    var withDisk = false

    @Option(name: .customLong("chart"), help: "With --sweep: write the loss-versus-limit chart to this SVG file.")
    var chart: String?

    func validate() throws {
        if !(2 ... 100).contains(steps) { throw ValidationError("--steps must be between 2 and 100") }
        if chart != nil && sweep == nil { throw ValidationError("--chart needs --sweep") }
        if let sweep {
            let conflicting: Bool
            switch sweep.parameter {
            case .countLimit: conflicting = replayOptions.storage.countLimit != nil
            case .costLimit: conflicting = replayOptions.storage.costLimit != nil
            case .memoryBudget: conflicting = replayOptions.pressure.memoryBudget != nil
            }
            if conflicting {
                throw ValidationError("--sweep \(sweep.parameter.rawValue) replaces --\(sweep.parameter.rawValue)")
            }
        }
    }

    func run() throws {
        var source = InputSource(path: input)
        var temporary: String?
        defer { if let temporary { unlink(temporary) } }
        let runner = ReplayRunner(options: try replayOptions.resolved())
        let outcomes: [ReplayOutcome] = try ReplayRunner.exitingIfUnopenable {
            try source.checkReadable()
            if source.isStandardInput {
                // Every storage must see the same bytes: keep standard input in a temporary file.
                let path = try CompareCommand.spool(source)
                temporary = path
                source = InputSource(path: path)
            }
            if let sweep {
                let (report, failed) = try SweepRunner(
                    options: try replayOptions.resolved(), specification: sweep, steps: steps, withDisk: withDisk
                ).run(source)
                try output(report, failed: failed)
                return []
            }
            var kinds = MemoryStorageRegistry.kinds
            if withDisk { kinds += kinds.filter(\.evicts).map { $0.withDiskTier() } + [.diskOnly()] }
            return try kinds.map { kind in
                let outcome = try runner.run(source, into: kind)
                defer { outcome.close() }
                return outcome
            }
        }
        guard sweep == nil else { return }
        let reports = outcomes.map { $0.report(listing: outputOptions.lostUsers) }
        let verdict = Verdict.make(reports)
        switch outputOptions.format {
        case .json: JSONOutput.print(CompareReport(storages: reports, verdict: verdict))
        case .text: print(CompareText.render(reports, verdict: verdict))
        }
        if outcomes.contains(where: { $0.error != nil }) { throw ExitStatus.malformedInput }
    }

    private func output(_ report: SweepReport, failed: Bool) throws {
        if let chart {
            do {
                try SweepChart.svg(
                    report, title: input == "-" ? "standard input" : (input as NSString).lastPathComponent
                )
                .write(toFile: chart, atomically: true, encoding: .utf8)
            } catch {
                throw ValidationError("cannot write the chart to \(chart): \(error.localizedDescription)")
            }
        }
        switch outputOptions.format {
        case .json: JSONOutput.print(report)
        case .text: print(SweepText.render(report))
        }
        if failed { throw ExitStatus.malformedInput }
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
        row("refill probes") { $0.refillProbes.map(Format.count) ?? "-" }
        row("evictions") { Format.count($0.evictions.values.reduce(0, +)) }
        row("pressure events") { Format.count($0.pressureEvents.count) }
        row("storage bytes (est.)") { Format.bytes($0.storageEstimatedBytes) }
        row("stanzas/s") { Format.count($0.stanzasPerSecond) }
        if reports.contains(where: { $0.disk != nil }) {
            row("disk reads, all users once") { $0.disk.map { Format.count($0.diskReads) } ?? "-" }
            row("disk bytes written") { $0.disk.map { Format.bytes($0.bytesWritten) } ?? "-" }
            row("disk file") { $0.disk.map { Format.bytes($0.fileBytes) } ?? "-" }
        }
        row("peak resident") { $0.peakResidentBytes.map(Format.bytes) ?? "unknown" }
        var lines = [table.render()]
        if let first = reports.first {
            lines.insert(
                "\(Format.count(first.stanzas)) stanzas, \(Format.count(first.presenceUpdates)) presence updates, "
                    + "\(Format.count(first.ignoredTotal)) ignored, \(Format.count(first.rejectedTotal)) rejected",
                at: 0)
            if let error = first.error {
                lines.append(
                    "stream error: \(error.condition) at \(Format.position(error)): \(error.message); "
                        + "everything before it was applied")
            }
        }
        for report in reports where !report.notApplicable.isEmpty {
            lines.append(
                "not applicable to \(report.storage): " + report.notApplicable.map { "--\($0)" }.joined(separator: ", ")
            )
        }
        for note in Set(reports.flatMap(\.notes)).sorted() { lines.append("note: \(note)") }
        lines.append("verdict: " + verdict)
        return lines.joined(separator: "\n")
    }
}
