import Foundation
import PresencePressure

/// Whether a server the test started is the one listening on its port.
///
/// A test server is given a port found free a moment earlier (``freeLoopbackPort()``), and another test's server
/// can bind it first. Prosody then logs "Failed to open server port" and runs on without a client port, so
/// "something accepts a connection on the port" would call it ready while a client's connection reaches the other
/// program (a service's feed port, say, which never sends stream features, so the login times out). This asks the
/// kernel instead: a socket listening on the port, in `/proc/net/tcp` or `/proc/net/tcp6`, that is one of the
/// process's own descriptors; a listener that belongs to another program ends the wait at once, so that the
/// fixture starts the server again on another port.
package enum ListeningPort {
    /// Who listens on a port.
    package enum Holder: Equatable {
        /// The process asked about.
        case process
        /// Another program: the process asked about will never bind the port.
        case another
        /// Nobody yet.
        case nobody
    }

    /// Who holds a socket listening on TCP `port` (any local address): process `processIdentifier`, another, or
    /// nobody.
    package static func holder(of port: Int, expecting processIdentifier: Int32) -> Holder {
        let inodes = listeningSocketInodes(port: port)
        guard !inodes.isEmpty else { return .nobody }
        let directory = "/proc/\(processIdentifier)/fd"
        // Unreadable for now (this process out of descriptors for a moment, say): asked again.
        guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return .nobody }
        let held = descriptors.contains { descriptor in
            guard
                let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(descriptor)"),
                target.hasPrefix("socket:["), target.hasSuffix("]")
            else { return false }
            return inodes.contains(String(target.dropFirst("socket:[".count).dropLast()))
        }
        return held ? .process : .another
    }

    /// Waits until `process` listens on every one of `ports`; false as soon as another program holds one of them
    /// (the caller starts the server again on other ports), when the process ends, or after `timeout`.
    package static func waitUntilHeld(_ ports: [Int], by process: Process, timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline {
            let holders = ports.map { holder(of: $0, expecting: process.processIdentifier) }
            if holders.contains(.another) { return false }
            if holders.allSatisfy({ $0 == .process }) { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return false
    }

    /// The inodes of the sockets listening on `port`, from the kernel's tables of IPv4 and IPv6 TCP sockets
    /// (columns: slot, local address:port in hex, remote address, state, ..., inode at the tenth).
    private static func listeningSocketInodes(port: Int) -> Set<String> {
        let listen = "0A"
        var inodes: Set<String> = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            for line in (ProcFile.lines(table) ?? []).dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 9, fields[3] == listen,
                    let portText = fields[1].split(separator: ":").last, Int(portText, radix: 16) == port
                else { continue }
                inodes.insert(String(fields[9]))
            }
        }
        return inodes
    }
}
