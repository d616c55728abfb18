import Foundation
import LoopbackHTTP

/// A real Prosody from Debian, started for a test on a free loopback port with a generated configuration and
/// data directory (never the system service), with the given accounts registered through `prosodyctl`.
final class ProsodyServer {
    let domain: String
    let port: Int
    let directory: URL
    private let process: Process

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init(domain: String = "example.test", accounts: [String: String]) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/prosody") else {
            throw Failure(description: "prosody is not installed (apt-get install prosody; .ci/run does)")
        }
        self.domain = domain
        var lastError = ""
        // A port found free can be taken by someone else before Prosody binds it: try again with another.
        for _ in 0 ..< 5 {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "prosody-test-\(UUID().uuidString)")
            let port = ProsodyServer.freePort()
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent("data"), withIntermediateDirectories: true)
            let config = directory.appendingPathComponent("prosody.cfg.lua")
            try ProsodyServer.configuration(directory: directory.path, port: port, domain: domain)
                .write(to: config, atomically: true, encoding: .utf8)
            for (user, password) in accounts {
                try ProsodyServer.prosodyctl(["--config", config.path, "register", user, domain, password])
            }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/prosody")
            process.arguments = ["--config", config.path, "-F"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            if ProsodyServer.waitUntilListening(port: port, process: process) {
                self.port = port
                self.directory = directory
                self.process = process
                return
            }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            lastError =
                (try? String(contentsOf: directory.appendingPathComponent("prosody.log"), encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(at: directory)
        }
        throw Failure(description: "prosody did not start: \(lastError)")
    }

    /// Kills the server (SIGKILL: a child of the test process may inherit SIGTERM ignored, and a test server has
    /// nothing to save) and removes its directory.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }

    private static func configuration(directory: String, port: Int, domain: String) -> String {
        """
        run_as_root = true
        pidfile = "\(directory)/prosody.pid"
        data_path = "\(directory)/data"
        modules_enabled = { "roster"; "saslauth"; "tls"; "disco"; "ping" }
        modules_disabled = { "s2s" }
        c2s_ports = { \(port) }
        c2s_interfaces = { "127.0.0.1" }
        s2s_ports = { }
        http_ports = { }
        https_ports = { }
        legacy_ssl_ports = { }
        c2s_direct_tls_ports = { }
        authentication = "internal_hashed"
        c2s_require_encryption = false
        log = { info = "\(directory)/prosody.log" }
        VirtualHost "\(domain)"
        """
    }

    private static func prosodyctl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/prosodyctl")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "prosodyctl \(arguments.dropFirst(2).joined(separator: " ")) failed")
        }
    }

    /// A port nobody listens on now (Prosody cannot be given port 0 and report what it bound).
    private static func freePort() -> Int {
        let (descriptor, port) = LoopbackTCP.boundSocket(listening: false)
        close(descriptor)
        return port
    }

    private static func waitUntilListening(port: Int, process: Process) -> Bool {
        let deadline = ContinuousClock.now + .seconds(20)
        while process.isRunning && ContinuousClock.now < deadline {
            if let descriptor = try? LoopbackTCP.connect(port: port) {
                close(descriptor)
                return true
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return false
    }
}
