import ArgumentParser
import Foundation
import PresenceService

/// `presence`: replay, compare and query presence streams against the storages, and generate streams.
@main
struct PresenceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "presence",
        abstract: "Feed XMPP presence streams into a storage under memory pressure and see exactly what it lost.",
        discussion: """
            Exit codes: 0 success (losses are a finding, not a failure); 65 the stream was malformed or hit a \
            limit (the report is still printed, with every update before the error kept); 64 usage error; \
            66 an input that cannot be opened.

            Shell completions: presence --generate-completion-script bash|zsh|fish.
            """,
        version: PresenceVersion.current,
        subcommands: [
            ReplayCommand.self, CompareCommand.self, QueryCommand.self, GenerateCommand.self, ServeCommand.self,
            StatsCommand.self, WatchCommand.self,
        ])
}

/// Exit codes from sysexits.h, as `presence --help` and the CLI guide document them.
enum ExitStatus {
    static let malformedInput = ExitCode(65)
    static let cannotOpenInput = ExitCode(66)
}
