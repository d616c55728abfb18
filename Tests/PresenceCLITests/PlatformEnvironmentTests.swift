import Foundation
import PresenceTestSupport
import Testing

/// `presence serve` starts beside the `PRESENCE_*` variables a platform puts in its environment (Kubernetes
/// service links for a Service named like the program), reads its own, and still refuses a typo of them.
@Suite("presence serve starts beside the variables its platform adds", .realServers)
struct PlatformEnvironmentTests {
    /// What Kubernetes gives every pod of a namespace holding a Service `name` with one port, 8080, named `http`
    /// (service links, on by default).
    static func serviceLinks(for name: String, address: String = "10.96.0.12") -> [String: String] {
        let prefix = name.uppercased().replacingOccurrences(of: "-", with: "_")
        return [
            "\(prefix)_SERVICE_HOST": address, "\(prefix)_SERVICE_PORT": "8080", "\(prefix)_SERVICE_PORT_HTTP": "8080",
            "\(prefix)_PORT": "tcp://\(address):8080", "\(prefix)_PORT_8080_TCP": "tcp://\(address):8080",
            "\(prefix)_PORT_8080_TCP_PROTO": "tcp", "\(prefix)_PORT_8080_TCP_PORT": "8080",
            "\(prefix)_PORT_8080_TCP_ADDR": address,
        ]
    }

    @Test(arguments: ["presence", "presence-store"])
    func aPodBesideAServiceNamedLikeTheProgramStartsReadsItsKeysAndWarnsOnlyAboutTheUnknown(service: String) async throws {
        let links = Self.serviceLinks(for: service)
        let environment = links.merging([
            "PRESENCE_STORAGE": "lru", "PRESENCE_COUNT_LIMIT": "5000", "PRESENCE_BIN": "/usr/local/bin/presence",
        ]) { $1 }

        let printed = try await CLI.run(["serve", "--print-config"], environment: environment)
        #expect(printed.status == 0, "\(printed.stderr)")
        #expect(printed.stdout.contains("count-limit: 5000  # environment PRESENCE_COUNT_LIMIT"), "\(printed.stdout)")
        #expect(
            printed.stdout.contains(
                "# warning: PRESENCE_BIN is not a setting of presence serve (no key is named 'bin'); ignored"),
            "\(printed.stdout)")
        for variable in links.keys {
            #expect(
                printed.stdout.contains("# ignored: \(variable) is not a setting of presence serve (a Kubernetes service link)"),
                "\(variable): \(printed.stdout)")
        }

        let service = try await RunningServer.started(environment: environment)
        defer { _ = service.stop() }
        let stats = try await TestHTTP.get(port: service.httpPort, path: "/v1/stats")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(stats.body)) as? [String: Any])
        #expect(json["storage"] as? String == "lru", "the real keys are read: \(json["storage"] ?? "-")")
        #expect(await service.logs("PRESENCE_BIN is not a setting of presence serve"), "the unknown one is a warning")
        #expect(!service.log.contains("PRESENCE_PORT"), "a platform's own variables are not worth a warning")
        #expect(await service.stopped() == 0)
    }

    @Test(arguments: [
        ("PRESENCE_COUNT_LIMT", "5", "did you mean PRESENCE_COUNT_LIMIT"),
        ("PRESENCE_XMP_PORT", "5222", "did you mean PRESENCE_XMPP_PORT"),
        ("presence_count_limit", "5", "did you mean PRESENCE_COUNT_LIMIT"),
        // A platform's name with a value no platform gives is a typo's.
        ("PRESENCE_XMPP_PORTS", "5222", "did you mean PRESENCE_XMPP_PORT"),
    ])
    func aNearMissOfARealKeyIsStillRefused(variable: String, value: String, says: String) async throws {
        let result = try await CLI.run(["serve", "--print-config"], environment: [variable: value])
        #expect(result.status == 64, "\(result.stdout)")
        #expect(result.stderr.contains(variable) && result.stderr.contains(says), "\(result.stderr)")
    }
}
