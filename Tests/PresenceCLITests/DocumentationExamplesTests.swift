import Foundation
import PresenceTestSupport
import Testing

/// The examples a new user copies from the README and the getting-started guide run as written: a guide that
/// lies fails the build.
@Suite("The README's and the getting-started guide's examples run as written", .realServers)
struct DocumentationExamplesTests {
    static let guides = ["README.md", "Documentation/GettingStarted.md"]

    /// The `presence ...` lines of a document's `sh` blocks, with trailing comments cut.
    static func commands(in guide: String) throws -> [String] {
        let text = try String(contentsOf: CLI.repository.appendingPathComponent(guide), encoding: .utf8)
        var commands: [String] = []
        var inShell = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                inShell = line == "```sh"
                continue
            }
            guard inShell, line.hasPrefix("presence ") else { continue }
            let command = line.range(of: " #").map { line[..<$0.lowerBound] } ?? line
            commands.append(command.trimmingCharacters(in: .whitespaces))
        }
        return commands
    }

    /// A command line split into arguments as a shell would, for the quoting these documents use.
    static func arguments(_ command: String) -> [String] {
        var arguments: [String] = []
        var current = ""
        var quote: Character?
        var inWord = false
        for character in command {
            if let open = quote {
                if character == open { quote = nil } else { current.append(character) }
            } else if character == "'" || character == "\"" {
                quote = character
                inWord = true
            } else if character == " " {
                if inWord { arguments.append(current) }
                current = ""
                inWord = false
            } else {
                current.append(character)
                inWord = true
            }
        }
        if inWord { arguments.append(current) }
        return arguments
    }

    /// Runs `command` (without its leading `presence`) from the repository, with files it writes put in `directory`.
    static func run(_ command: String, writingTo directory: URL, serviceURL: String? = nil) throws -> CLIResult {
        let arguments = Self.arguments(command).dropFirst().map { argument -> String in
            if argument.hasPrefix("Samples/") { return CLI.repository.appendingPathComponent(argument).path }
            if argument.hasSuffix(".svg") || argument.hasSuffix(".xml") {
                return directory.appendingPathComponent((argument as NSString).lastPathComponent).path
            }
            if let serviceURL, argument == "http://127.0.0.1:8080" { return serviceURL }
            return argument
        }
        return try CLI.run(Array(arguments), timeout: TestDeadline.processExit)
    }

    @Test(arguments: guides)
    func everyExampleWithoutAServiceRunsAndSucceeds(guide: String) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("presence-examples-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let offline = try Self.commands(in: guide).filter {
            !$0.hasPrefix("presence serve") && !$0.contains("--server")
        }
        #expect(offline.count >= 3, "\(guide) has examples to run")
        for command in offline {
            let result = try Self.run(command, writingTo: directory)
            #expect(result.status == 0 && !result.timedOut, "\(guide): \(command)\n\(result.stderr)")
            #expect(!result.stdout.isEmpty || command.contains(" -o ") || command.contains("--chart"), "\(command)")
        }
    }

    @Test func theQuickStartComparisonPrintsWhatTheREADMEShows() throws {
        let readme = try String(contentsOf: CLI.repository.appendingPathComponent("README.md"), encoding: .utf8)
        let command = try #require(
            readme.split(separator: "\n").first { $0.hasPrefix("swift run presence compare ") },
            "the quick start's first command")
        let result = try Self.run(
            String(command.dropFirst("swift run ".count)), writingTo: FileManager.default.temporaryDirectory)
        #expect(result.status == 0, "\(result.stderr)")
        // The output block after the commands: every line shown (but the elision) is printed as shown.
        let quickStart = try #require(readme.range(of: "## Quick start"))
        let blocks = readme[quickStart.upperBound...].components(separatedBy: "```")
        let shown = blocks[3].split(separator: "\n").map(String.init).filter { !$0.isEmpty && $0 != "..." }
        #expect(shown.count >= 8)
        // Columns are as wide as their widest cell, which includes figures that vary by build and machine (the peak
        // resident memory of a ThreadSanitizer build is over 100 MiB): compared with runs of spaces and of dashes as
        // one.
        func cells(_ line: String) -> String {
            line.split(separator: " ", omittingEmptySubsequences: true)
                .map { $0.allSatisfy { $0 == "-" } ? "-" : String($0) }.joined(separator: " ")
        }
        let printed = Set(result.stdout.split(separator: "\n").map { cells(String($0)) })
        for line in shown { #expect(printed.contains(cells(line)), "README shows: \(line)") }
    }

    @Test func theGettingStartedServiceExamplesAnswerForTheSampleFedToIt() async throws {
        let server = try RunningServer()
        defer { _ = server.stop() }
        let sample = try Data(contentsOf: CLI.repository.appendingPathComponent("Samples/office-morning.xml"))
        let descriptor = try LoopbackTCP.connect(port: server.feedPort)
        try sample.withUnsafeBytes { try LoopbackTCP.sendAll(descriptor, $0) }
        close(descriptor)
        let url = "http://127.0.0.1:\(server.httpPort)"
        let commands = try Self.commands(in: "Documentation/GettingStarted.md").filter {
            $0.contains("--server") && !$0.hasPrefix("presence watch")
        }
        #expect(commands.count >= 2)
        // The feed is applied in the background: wait until all 198 people are in.
        #expect(
            try await eventually {
                let stats = try await TestHTTP.get(port: server.httpPort, path: "/v1/stats")
                let json = try JSONSerialization.jsonObject(with: Data(stats.body)) as? [String: Any]
                return json?["entries"] as? Int == 198
            })
        let directory = FileManager.default.temporaryDirectory
        for command in commands {
            let result = try await onAThreadOfItsOwn { try Self.run(command, writingTo: directory, serviceURL: url) }
            #expect(result.status == 0, "\(command)\n\(result.stderr)")
            #expect(!result.stdout.contains("unknown"), "the sample's people are known: \(command)\n\(result.stdout)")
        }
    }
}
