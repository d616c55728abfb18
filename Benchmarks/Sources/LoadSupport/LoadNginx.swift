import Foundation

/// Debian's nginx running the shipped `Samples/deploy/nginx-replicas.conf` in front of replicas on this machine,
/// from a directory of its own, with an access log that names the replica each request went to.
public final class LoadNginx: Sendable {
    public let port: Int
    public let directory: URL
    private let process: Process

    /// One line of the access log: when the request ended, the replicas tried in order, and the final status.
    public struct AccessRecord: Sendable {
        /// Seconds since the epoch, with milliseconds (`$msec`).
        public let endedAt: Double
        /// Every replica nginx tried for the request, in order (`$upstream_addr`).
        public let replicaPorts: [Int]
        public let status: Int
    }

    /// - Parameter replicaPorts: the HTTP ports of the three replicas, in the sample's order (8081, 8082, 8083).
    public init(replicaPorts: [Int]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("load-nginx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        var sample = try String(
            contentsOf: repository.appendingPathComponent("Samples/deploy/nginx-replicas.conf"), encoding: .utf8)
        for (index, replica) in replicaPorts.enumerated() {
            sample = sample.replacingOccurrences(of: "127.0.0.1:\(8081 + index)", with: "127.0.0.1:\(replica)")
        }
        let probe = LoopbackTCP.boundSocket(listening: false)
        close(probe.descriptor)
        port = probe.port
        sample = sample.replacingOccurrences(of: "listen 127.0.0.1:8080;", with: "listen 127.0.0.1:\(port);")
        try sample.write(to: directory.appendingPathComponent("replicas.conf"), atomically: true, encoding: .utf8)
        let path = directory.path
        process = try NginxProcess.start(
            directory: directory, port: port,
            main: """
                worker_processes 1;
                events { worker_connections 4096; }
                """,
            http: """
                log_format replicas '$msec $status $upstream_addr';
                access_log \(path)/access.log replicas;
                include \(path)/replicas.conf;
                """)
    }

    public var errorLog: String {
        (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
    }

    /// The access log so far (nginx writes each line when its request ends).
    public func accessLog() -> [AccessRecord] {
        let text = (try? String(contentsOf: directory.appendingPathComponent("access.log"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", maxSplits: 2)
            guard fields.count == 3, let endedAt = Double(fields[0]), let status = Int(fields[1]) else { return nil }
            // "127.0.0.1:8081, 127.0.0.1:8082" when the first failed; "-" when none was tried.
            let ports = fields[2].split(separator: ",").compactMap { address in
                address.split(separator: ":").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            }
            return AccessRecord(endedAt: endedAt, replicaPorts: ports, status: status)
        }
    }

    public func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }
}
