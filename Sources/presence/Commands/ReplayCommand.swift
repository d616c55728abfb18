import ArgumentParser
import Foundation

/// `presence replay`: parse, apply, audit, report.
struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replay a presence stream into one storage and report exactly what it lost.")

    @Argument(help: "The stream to read: a file, or - for standard input.")
    var input: String

    @Option(name: .customLong("storage"), help: "dictionary, nscache or lru.")
    var storage: StorageChoice = .dictionary

    @OptionGroup var storageOptions: StorageOptions
    @OptionGroup var pressureOptions: PressureOptions
    @OptionGroup var streamOptions: StreamOptions
    @OptionGroup var outputOptions: OutputOptions

    func run() throws {
        let outcome = try ReplayRunner(storageOptions: storageOptions, pressureOptions: pressureOptions, streamOptions: streamOptions)
            .run(path: input, into: storage)
        let report = ReplayReport(outcome, listing: outputOptions.lostUsers)
        switch outputOptions.format {
        case .json: JSONOutput.print(report)
        case .text: print(ReplayText.render(report))
        }
        if outcome.error != nil { throw ExitStatus.malformedInput }
    }
}
