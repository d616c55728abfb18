import Foundation
import PresenceTestSupport
import Testing

@testable import presence

/// `presence serve --config FILE` and `PRESENCE_*` environment variables beside the flags: which one wins, and
/// the errors an operator gets for a file or a variable the service cannot use.
@Suite("presence serve: configuration file, environment and flags", .realServers)
struct ServeConfigurationTests {
    /// A file of its own with `text`, removed with `directory`.
    static func file(_ text: String, named name: String = "presence.yaml", in directory: URL) throws -> String {
        let url = directory.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("presence-config-\(UUID())")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// `key: value  # source` lines of `--print-config`, by key.
    static func printed(_ arguments: [String], environment: [String: String] = [:]) throws -> [String: (value: String, source: String)] {
        let result = try CLI.run(["serve"] + arguments + ["--print-config"], environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        var settings: [String: (String, String)] = [:]
        for line in result.stdout.split(separator: "\n") where !line.hasPrefix("#") {
            guard let colon = line.firstIndex(of: ":"), let hash = line.range(of: "  # ") else { continue }
            settings[String(line[..<colon])] = (
                String(line[line.index(after: colon) ..< hash.lowerBound]).trimmingCharacters(in: .whitespaces),
                String(line[hash.upperBound...])
            )
        }
        return settings
    }

    @Test func flagsWinOverTheEnvironmentWhichWinsOverTheFileWhichWinsOverDefaults() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try Self.file("storage: lru\ncount-limit: 100\nttl: 60\npsi: true\n", in: directory)

        let fromFile = try Self.printed(["--config", config])
        #expect(fromFile["count-limit"]?.value == "100" && fromFile["count-limit"]?.source == "\(config):2")
        #expect(fromFile["psi"]?.value == "true" && fromFile["psi"]?.source == "\(config):4")
        #expect(fromFile["max-connections"]?.value == "1024" && fromFile["max-connections"]?.source == "default")

        let environment = ["PRESENCE_COUNT_LIMIT": "200", "PRESENCE_PSI": "false"]
        let fromEnvironment = try Self.printed(["--config", config], environment: environment)
        #expect(fromEnvironment["count-limit"]?.value == "200")
        #expect(fromEnvironment["count-limit"]?.source == "environment PRESENCE_COUNT_LIMIT")
        #expect(fromEnvironment["psi"]?.value == "false", "false in the environment turns off what the file turned on")
        #expect(fromEnvironment["ttl"]?.source == "\(config):3")

        let fromFlag = try Self.printed(["--config", config, "--count-limit", "300"], environment: environment)
        #expect(fromFlag["count-limit"]?.value == "300" && fromFlag["count-limit"]?.source == "command line")

        let named = try Self.printed([], environment: ["PRESENCE_CONFIG": config])
        #expect(named["storage"]?.value == "lru", "PRESENCE_CONFIG names the file")
    }

    @Test func theServiceRunsWithWhatTheFileAndTheEnvironmentSay() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // JSON, which the YAML reader reads as it is.
        let config = try Self.file(
            #"{"storage": "nscache", "count-limit": 50, "feed": "127.0.0.1:0", "http": "127.0.0.1:0"}"#,
            named: "presence.json", in: directory)
        let server = try RunningServer(["--config", config], environment: ["PRESENCE_STORAGE": "lru"])
        defer { _ = server.stop() }
        let stats = try await TestHTTP.get(port: server.httpPort, path: "/v1/stats")
        let json = try JSONSerialization.jsonObject(with: Data(stats.body)) as? [String: Any]
        #expect(json?["storage"] as? String == "lru", "the environment overrides the file")
    }

    @Test func aSecretStaysInItsFileAndOnlyItsPathIsASetting() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let password = try Self.file("correct horse battery staple\n", named: "watcher.password", in: directory)
        let config = try Self.file("xmpp-jid: watcher@corp.example\nxmpp-password-file: \(password)\n", in: directory)
        let result = try CLI.run(["serve", "--config", config, "--print-config"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(password))
        #expect(!result.stdout.contains("correct horse"), "the secret itself is never printed")
    }

    /// Each file an operator can get wrong, with the line and the words the error must have.
    @Test(arguments: [
        ("storage: lru\nxmpp-resoure: r1\n", ":2: unknown key 'xmpp-resoure'", "did you mean 'xmpp-resource'"),
        ("psi: maybe\n", ":1: key 'psi' is a flag", "not 'maybe'"),
        ("storage: lru\nevents-retry: [1, 2]\n", ":2: key 'events-retry' takes one value", "not a list"),
        ("http:\n  host: 0.0.0.0\n", ":2: key 'http' takes a plain value", "mapping"),
        ("storage: lru\n\ncount-limit: lots\n", ":3: key 'count-limit'", "'lots' is invalid"),
        ("storage: lru\nttl: 0\n", ":2: key 'ttl': must be at least 1 second", "not 0"),
        ("storage: [lru\n", "is not valid YAML or JSON", "did not find expected"),
        ("- storage\n- lru\n", ":1: must be a mapping", "flag names"),
        ("help: true\n", ":1: unknown key 'help'", "command line only"),
    ])
    func aBadFileIsAnErrorNamingTheKeyAndTheLine(text: String, says: String, andSays: String) throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try Self.file(text, in: directory)
        let result = try CLI.run(["serve", "--config", config])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(config + says) || result.stderr.contains(says), "\(result.stderr)")
        #expect(result.stderr.contains(andSays), "\(result.stderr)")
        #expect(!result.stderr.contains("presence service running"), "the service never starts")
    }

    @Test func aMissingFileAndAnUnknownVariableAreErrorsToo() throws {
        let missing = try CLI.run(["serve", "--config", "/nonexistent/presence.yaml"])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("/nonexistent/presence.yaml: cannot be read"), "\(missing.stderr)")

        let unknown = try CLI.run(["serve"], environment: ["PRESENCE_COUNT_LIMT": "5"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("PRESENCE_COUNT_LIMT"), "\(unknown.stderr)")
        #expect(unknown.stderr.contains("did you mean PRESENCE_COUNT_LIMIT"), "\(unknown.stderr)")

        let badValue = try CLI.run(["serve"], environment: ["PRESENCE_MAX_CONNECTIONS": "many"])
        #expect(badValue.status == 64)
        #expect(badValue.stderr.contains("environment PRESENCE_MAX_CONNECTIONS: key 'max-connections'"), "\(badValue.stderr)")

        let outOfBounds = try CLI.run(["serve"], environment: ["PRESENCE_EVENTS_RETRY": "0"])
        #expect(outOfBounds.status == 64)
        #expect(
            outOfBounds.stderr.contains("environment PRESENCE_EVENTS_RETRY: key 'events-retry': must be between 1 and"),
            "\(outOfBounds.stderr)")
    }

    @Test func everyFlagOfTheServiceHasAKey() throws {
        let help = try CLI.run(["serve", "--help"]).stdout
        let printed = try Self.printed([])
        let flags = help.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "," || $0 == "/" || $0 == "(" })
            .filter { $0.hasPrefix("--") }.map { String($0.dropFirst(2).prefix { $0.isLetter || $0 == "-" }) }
        // An on/off flag is also `--no-NAME`, the same key turned off.
        let settable = Set(flags.map { $0.hasPrefix("no-") ? String($0.dropFirst(3)) : $0 })
            .subtracting(["help", "version", "config", "print-config"])
        #expect(settable.count >= 50)
        for flag in settable { #expect(printed[flag] != nil, "--\(flag) has a key") }
    }

    /// The Operations guide's flag tables are the table of keys: a row per key, no row for a flag that is no key,
    /// and the default in brackets as the help gives it.
    @Test func theOperationsGuideListsEveryKeyWithItsDefault() throws {
        let guide = try String(
            contentsOf: CLI.repository.appendingPathComponent("Documentation/Operations.md"), encoding: .utf8)
        var rows: [String: String] = [:]
        for line in guide.split(separator: "\n") where line.hasPrefix("| `--") {
            let name = String(line.dropFirst("| `--".count).prefix { $0.isLetter || $0.isNumber || $0 == "-" })
            rows[name] = String(line)
        }
        for key in SettingKeys.serve {
            guard let row = rows[key.name] else {
                Issue.record("Operations.md has no row for --\(key.name)")
                continue
            }
            // The first bracket that is not a link's text.
            let bracket = row.firstMatch(of: /\[([^\]]*)\](?!\()/).map { String($0.1) }
            #expect(bracket == key.documentedDefault, "--\(key.name): the guide says \(bracket ?? "no default")")
        }
        for name in rows.keys { #expect(SettingKeys.serveByName[name] != nil, "--\(name) in the guide is a key") }
    }
}
