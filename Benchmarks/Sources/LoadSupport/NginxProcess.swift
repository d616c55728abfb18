import Foundation

/// Debian's nginx in the foreground, from a directory of its own: its configuration, pid file, logs and
/// temporary files all in `directory`, so that it never touches the system's nginx.
enum NginxProcess {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Writes `nginx.conf` (`main` lines, then an `http` block of `http` lines after the per-directory paths) and
    /// starts nginx on it; returns once `port` accepts connections.
    static func start(directory: URL, port: Int, main: String, http: String) throws -> Process {
        let path = directory.path
        try """
        \(getuid() == 0 ? "user root;" : "")
        pid \(path)/nginx.pid;
        error_log \(path)/error.log warn;
        \(main)
        http {
            client_body_temp_path \(path)/client_body;
            proxy_temp_path \(path)/proxy;
            fastcgi_temp_path \(path)/fastcgi;
            uwsgi_temp_path \(path)/uwsgi;
            scgi_temp_path \(path)/scgi;
            \(http)
        }
        """.write(to: directory.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
        process.arguments = ["-p", path, "-c", "\(path)/nginx.conf", "-g", "daemon off;"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = ContinuousClock.now + .seconds(20)
        while process.isRunning && ContinuousClock.now < deadline {
            if let descriptor = try? LoopbackTCP.connect(port: port) {
                close(descriptor)
                return process
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        if process.isRunning { process.terminate() }
        let log = (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
        throw Failure(description: "nginx did not start: \(log)")
    }
}
