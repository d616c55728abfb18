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

extension PresenceCommand {
    /// `presence serve` first gathers its settings from the environment and a configuration file
    /// (``ServeConfigurationLayers``); every other command goes straight to the flag parser.
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard arguments.first == "serve" else {
            await main(arguments)
            return
        }
        let serveArguments = Array(arguments.dropFirst())
        let layers: ServeConfigurationLayers
        do {
            layers = try await ServeConfigurationLayers(serveArguments: serveArguments)
        } catch {
            fail("\(error)")
        }
        var command: any ParsableCommand
        do {
            command = try parseAsRoot(["serve"] + layers.arguments)
        } catch {
            // A value from the environment or the file that its flag refuses: say where it came from.
            var message = fullMessage(for: error)
            if message.hasPrefix("Error: ") { message.removeFirst("Error: ".count) }
            if let setting = layers.source(namedIn: message), exitCode(for: error) != .success {
                fail("\(setting.source): key '\(setting.argument.name)': \(message)")
            }
            exit(withError: error)
        }
        if ServeConfigurationLayers.longNames(in: serveArguments).contains("print-config") {
            print(layers.rendered(flags: serveArguments))
            return
        }
        do {
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }

    private static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("Error: \(message)\n".utf8))
        Foundation.exit(ExitCode.validationFailure.rawValue)
    }
}

/// Exit codes from sysexits.h, as `presence --help` and the CLI guide document them.
enum ExitStatus {
    static let malformedInput = ExitCode(65)
    static let cannotOpenInput = ExitCode(66)
}
