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
        let source = InputSource(path: input)
        let outcome: ReplayOutcome
        do {
            try source.checkReadable()
            outcome = try ReplayRunner(storageOptions: storageOptions, pressureOptions: pressureOptions, streamOptions: streamOptions)
                .run(source, into: storage)
        } catch let error as InputSource.CannotOpen {
            FileHandle.standardError.write(Data("presence: \(error)\n".utf8))
            throw ExitStatus.cannotOpenInput
        }
        let report = ReplayReport(outcome, listing: outputOptions.lostUsers)
        switch outputOptions.format {
        case .json: JSONOutput.print(report)
        case .text: print(ReplayText.render(report))
        }
        if outcome.error != nil { throw ExitStatus.malformedInput }
    }
}
