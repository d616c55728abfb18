import ArgumentParser
import Foundation

/// `presence replay`: parse, apply, audit, report.
struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replay a presence stream into one storage and report exactly what it lost.")

    @Argument(help: "The stream to read: a file, or - for standard input.")
    var input: String

    @Option(name: .customLong("storage"), help: "\(StorageName.choices).")
    var storage: StorageName = .default

    @OptionGroup var replayOptions: ReplayOptions
    @OptionGroup var outputOptions: OutputOptions

    func run() throws {
        let outcome = try ReplayRunner(options: try replayOptions.resolved()).run(path: input, into: storage.kind)
        let report = outcome.report(listing: outputOptions.lostUsers)
        outcome.close()
        switch outputOptions.format {
        case .json: JSONOutput.print(report)
        case .text: print(ReplayText.render(report))
        }
        if outcome.error != nil { throw ExitStatus.malformedInput }
    }
}
