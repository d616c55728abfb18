import Foundation
import PresenceStore

/// A real Prosody from Debian, started for a test on a free loopback port with a generated configuration and
/// data directory (never the system service), with the given accounts registered through `prosodyctl`.
///
/// Optionally with shared roster groups (`mod_groups`, as a deployment would set up its watcher) and with a
/// certificate for STARTTLS issued by a test CA (``TestCertificateAuthority``), in which case the server
/// requires encryption.
package final class ProsodyServer: XMPPTestServer {
    package var kind: XMPPServerKind { .prosody }
    package let domain: String
    package let port: Int
    package let directory: URL
    package let certificates: TestCertificateAuthority?
    /// Prosody answers a probe of a member without a session: it needs no list of sessions.
    package var sessionsAPI: URL? { nil }
    private let configFile: URL
    private let process: ServerProcess

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// - Parameters:
    ///   - accounts: user name (localpart) → password.
    ///   - groups: group name → the localparts in it; every member of a group has every other in its roster
    ///     with a mutual subscription.
    ///   - tls: serve STARTTLS with a certificate for `domain` and require it.
    ///   - profile: the client limits it runs with.
    package init(
        domain: String = "example.test", accounts: [String: String], groups: [String: [String]] = [:],
        tls: Bool = false, profile: ServerProfile = .unshaped
    ) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/prosody") else {
            throw Failure(description: "prosody is not installed (apt-get install prosody; .ci/run does)")
        }
        self.domain = domain
        var lastError = ""
        // A port found free can be taken by someone else before Prosody binds it: try again with another.
        for _ in 0 ..< 5 {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "prosody-test-\(UUID().uuidString)")
            let port = freeLoopbackPort()
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent("data"), withIntermediateDirectories: true)
            let certificates = tls ? try TestCertificateAuthority(directory: directory, serverName: domain) : nil
            let groupsFile = directory.appendingPathComponent("groups.txt")
            try ProsodyServer.groupsText(groups, domain: domain).write(
                to: groupsFile, atomically: true, encoding: .utf8)
            let config = directory.appendingPathComponent("prosody.cfg.lua")
            try ProsodyServer.configuration(
                directory: directory.path, port: port, domain: domain,
                groupsFile: groups.isEmpty ? nil : groupsFile.path,
                certificates: certificates, profile: profile
            ).write(to: config, atomically: true, encoding: .utf8)
            for (user, password) in accounts {
                try ProsodyServer.prosodyctl(["--config", config.path, "register", user, domain, password])
            }
            if let process = try ServerProcess.start(
                launch: { try ProsodyServer.launch(config: config) },
                waitUntilReady: { ListeningPort.waitUntilHeld([port], by: $0, timeout: TestDeadline.serverReady) })
            {
                self.port = port
                self.directory = directory
                self.configFile = config
                self.certificates = certificates
                self.process = process
                return
            }
            let log = (try? String(contentsOf: directory.appendingPathComponent("prosody.log"), encoding: .utf8)) ?? ""
            lastError = "on 127.0.0.1:\(port); its log ends:\n\(log.suffix(2000))"
            try? FileManager.default.removeItem(at: directory)
        }
        throw Failure(description: "prosody did not get ready within \(TestDeadline.serverReady) \(lastError)")
    }

    /// Kills the server at once, as a crash would: every session is cut without a stream close.
    package func kill() async {
        await onAThreadOfItsOwn { self.process.kill() }
    }

    /// Freezes the server (SIGSTOP): connections stay open and nothing answers, as with a hung host.
    package func pause() { process.pause() }

    /// Lets a paused server run again (SIGCONT).
    package func resume() { process.resume() }

    /// Starts the server again on the same port with the same data (after ``kill()``).
    package func restart() async throws {
        let restarted = try await onAThreadOfItsOwn { try self.process.restart(attempts: 50, pausing: 0.1) }
        guard restarted else { throw Failure(description: "prosody did not restart on port \(port)") }
    }

    /// Registers another account on the running server.
    package func register(_ user: String, password: String) throws {
        try ProsodyServer.prosodyctl(["--config", configFile.path, "register", user, domain, password])
    }

    /// Kills the server (SIGKILL: a child of the test process may inherit SIGTERM ignored, and a test server has
    /// nothing to save) and removes its directory.
    package func stop() {
        process.kill()
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }

    private static func launch(config: URL) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/prosody")
        process.arguments = ["--config", config.path, "-F"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    private static func groupsText(_ groups: [String: [String]], domain: String) -> String {
        groups.sorted { $0.key < $1.key }.map { name, members in
            "[\(name)]\n" + members.map { "\($0)@\(domain)\n" }.joined()
        }.joined()
    }

    private static func configuration(
        directory: String, port: Int, domain: String, groupsFile: String?, certificates: TestCertificateAuthority?,
        profile: ServerProfile
    ) throws -> String {
        var modules = ["roster", "saslauth", "disco", "ping", "presence", "time"]
        // The shipped rate limits, as the installed package's configuration has them.
        let limits = profile == .unshaped ? nil : try ServerProfile.prosodyLimits()
        if limits != nil { modules.append("limits") }
        if groupsFile != nil { modules.append("groups") }
        // Without a certificate of its own, STARTTLS is not offered at all (Prosody would otherwise offer it with
        // whatever certificate it finds and fail the handshake).
        if certificates != nil { modules.append("tls") }
        var lines = [
            "run_as_root = true",
            "pidfile = \"\(directory)/prosody.pid\"",
            "data_path = \"\(directory)/data\"",
            "modules_enabled = { \(modules.map { "\"\($0)\"" }.joined(separator: "; ")) }",
            "modules_disabled = { \"s2s\" }",
            "c2s_ports = { \(port) }",
            "c2s_interfaces = { \"127.0.0.1\" }",
            "s2s_ports = { }",
            "http_ports = { }",
            "https_ports = { }",
            "legacy_ssl_ports = { }",
            "c2s_direct_tls_ports = { }",
            "authentication = \"internal_hashed\"",
            "log = { info = \"\(directory)/prosody.log\" }",
        ]
        if let groupsFile { lines.append("groups_file = \"\(groupsFile)\"") }
        if let limits { lines.append(limits) }
        if case .stockExempting(let watcher) = profile {
            lines.append(exemption(watcher: "\(watcher)@\(domain)"))
        }
        if let certificates {
            lines.append(
                "ssl = { certificate = \"\(certificates.serverCertificate.path)\"; key = \"\(certificates.serverKey.path)\" }"
            )
            lines.append("c2s_require_encryption = true")
        } else {
            lines.append("c2s_require_encryption = false")
        }
        lines.append("VirtualHost \"\(domain)\"")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The Deploying guide's exemption of the watcher account from `mod_limits`.
    package static func exemption(watcher: String) -> String {
        "unlimited_jids = { \"\(watcher)\" }"
    }

    private static func prosodyctl(_ arguments: [String]) throws {
        guard try Tool.run("/usr/bin/prosodyctl", arguments) == 0 else {
            throw Failure(description: "prosodyctl \(arguments.dropFirst(2).joined(separator: " ")) failed")
        }
    }
}
