import ArgumentParser
import Foundation
import PresenceStore

/// `presence query`: replay a stream, then answer for each JID.
struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Replay a stream into a storage, then show each JID's status: available, offline, unknown or lost.")

    @Option(name: .customLong("input"), help: "The stream to read: a file, or - for standard input.")
    var input: String

    @Option(name: .customLong("storage"), help: "dictionary, nscache or lru.")
    var storage: StorageChoice = .dictionary

    @OptionGroup var storageOptions: StorageOptions
    @OptionGroup var pressureOptions: PressureOptions
    @OptionGroup var streamOptions: StreamOptions

    @Option(name: .customLong("format"), help: "text or json.")
    var format: OutputFormat = .text

    @Argument(help: "Bare JIDs to look up (a resource is ignored).")
    var jids: [String]

    func validate() throws {
        guard !jids.isEmpty else { throw ValidationError("give at least one JID") }
        for jid in jids {
            do { _ = try JID(jid) } catch { throw ValidationError("'\(jid)' is not a valid JID: \(error)") }
        }
    }

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
        let results = jids.map { text -> QueryReport.Result in
            let key = (try! JID(text)).bare
            return QueryReport.Result(jid: key, stored: outcome.storage.lookup(key))
        }
        let report = QueryReport(results: results, error: Nullable(outcome.error.map(ReplayReport.StreamError.init)))
        switch format {
        case .json: JSONOutput.print(report)
        case .text: print(report.renderText())
        }
        if outcome.error != nil { throw ExitStatus.malformedInput }
    }
}
