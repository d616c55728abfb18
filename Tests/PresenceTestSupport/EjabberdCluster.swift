import Foundation

/// Two real ejabberd nodes from Debian in one cluster, started for a test: an `epmd` of the cluster's own on a
/// free loopback port (never the system's on 4369), the first node with the accounts and shared roster groups,
/// and a second that joins it as it starts and so shares its accounts, rosters and session table. Each node has
/// its own c2s port: a member logs in to either, or to both.
///
/// Killing a node with ``EjabberdServer/crash()`` is what a crashed cluster node is: the other removes its
/// sessions from the cluster's session table without a word to their contacts.
package final class EjabberdCluster: Sendable {
    package let first: EjabberdServer
    package let second: EjabberdServer
    private let epmd: Process

    package init(
        domain: String = "example.test", accounts: [String: String], groups: [String: [String]] = [:]
    ) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/epmd") else {
            throw EjabberdServer.Failure(description: "epmd is not installed (it comes with ejabberd's Erlang)")
        }
        let (epmd, port) = try Self.startEPMD()
        self.epmd = epmd
        let cookie = "presence-test-\(UInt64.random(in: 0 ... .max))"
        do {
            first = try EjabberdServer(
                domain: domain, accounts: accounts, groups: groups,
                distribution: .cluster(epmdPort: port, cookie: cookie, joining: nil))
            second = try EjabberdServer(
                domain: domain, accounts: [:], groups: [:],
                distribution: .cluster(epmdPort: port, cookie: cookie, joining: first.nodeName))
        } catch {
            Self.end(epmd)
            throw error
        }
        let nodes = try second.api("list_cluster", [:])
        guard nodes.contains(first.nodeName), nodes.contains(second.nodeName) else {
            stop()
            throw EjabberdServer.Failure(description: "the second ejabberd node did not join the first: \(nodes)")
        }
    }

    /// Starts the cluster's own `epmd` in the foreground, listening on loopback only, on a free port (another
    /// try on another port if that one was taken meanwhile).
    private static func startEPMD() throws -> (Process, Int) {
        for _ in 0 ..< 3 {
            let port = freeLoopbackPort()
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/epmd")
            process.arguments = ["-port", String(port)]
            var environment = ProcessInfo.processInfo.environment
            environment["ERL_EPMD_ADDRESS"] = "127.0.0.1"
            process.environment = environment
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            if ListeningPort.waitUntilHeld([port], by: process, timeout: TestDeadline.serverReady) {
                return (process, port)
            }
            end(process)
        }
        throw EjabberdServer.Failure(description: "the cluster's epmd did not start")
    }

    private static func end(_ process: Process) {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Stops both nodes, removes their directories and ends the cluster's `epmd`.
    package func stop() {
        second.stop()
        first.stop()
        Self.end(epmd)
    }

    deinit { stop() }
}
