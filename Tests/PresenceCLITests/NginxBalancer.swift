import Foundation
import PresenceTestSupport

/// Debian's nginx in front of the replicas, running the shipped sample configuration
/// (`Samples/deploy/nginx-replicas.conf`) with the replicas' and its own ports put in, from a directory of its own.
final class NginxBalancer {
    let port: Int
    let directory: URL
    private let process = Process()

    /// - Parameter replicaPorts: the HTTP ports of the three replicas, in the sample's order (8081, 8082, 8083).
    init(replicaPorts: [Int]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("presence-nginx-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        port = freeLoopbackPort()
        var sample = try String(
            contentsOf: CLI.repository.appendingPathComponent("Samples/deploy/nginx-replicas.conf"), encoding: .utf8)
        for (index, replica) in replicaPorts.enumerated() {
            sample = sample.replacingOccurrences(of: "127.0.0.1:\(8081 + index)", with: "127.0.0.1:\(replica)")
        }
        sample = sample.replacingOccurrences(of: "listen 127.0.0.1:8080;", with: "listen 127.0.0.1:\(port);")
        try sample.write(to: directory.appendingPathComponent("replicas.conf"), atomically: true, encoding: .utf8)
        let path = directory.path
        let main = """
            # The test's own nginx: its own pid file, logs and temporary files; workers as the user running it.
            \(getuid() == 0 ? "user root;" : "")
            worker_processes 1;
            pid \(path)/nginx.pid;
            error_log \(path)/error.log warn;
            events { worker_connections 1024; }
            http {
                access_log off;
                client_body_temp_path \(path)/client_body;
                proxy_temp_path \(path)/proxy;
                fastcgi_temp_path \(path)/fastcgi;
                uwsgi_temp_path \(path)/uwsgi;
                scgi_temp_path \(path)/scgi;
                include \(path)/replicas.conf;
            }
            """
        try main.write(to: directory.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
        process.arguments = ["-p", path, "-c", "\(path)/nginx.conf", "-g", "daemon off;"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        if ListeningPort.waitUntilHeld([port], by: process, timeout: TestDeadline.serverReady) { return }
        throw CocoaError(
            .fileReadUnknown,
            userInfo: [
                NSLocalizedDescriptionKey:
                    "nginx did not get ready on 127.0.0.1:\(port) within \(TestDeadline.serverReady); its error log:\n\(errorLog)"
            ])
    }

    var errorLog: String {
        (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
    }

    deinit {
        if process.isRunning {
            process.terminate()
            _ = CLI.waitForExit(process, timeout: TestDeadline.processExit)
        }
        try? FileManager.default.removeItem(at: directory)
    }
}
