import Foundation

/// Debian's nginx with the nchan module (`libnginx-mod-nchan`), the reference push server, from a directory of
/// its own on a free loopback port: `POST /pub?id=C` publishes a message to channel C, and
/// `GET /sub?id=A,B,…` (with `Accept: text/event-stream`) is one Server-Sent Events stream of every message to
/// the channels it names, each first sending the channel's latest message.
///
/// Each channel keeps only its latest message (`nchan_message_buffer_length 1`), so a new subscriber's first
/// events are the latest message of each channel it names: what a change stream's snapshot is.
public final class LoadNchan: Sendable {
    public let port: Int
    public let directory: URL
    private let process: Process

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The module as Debian installs it.
    public static let module = "/usr/lib/nginx/modules/ngx_nchan_module.so"

    /// - Parameters:
    ///   - workers: nginx's `worker_processes`.
    ///   - connections: the most connections each worker holds (subscribers and publishers).
    public init(workers: Int, connections: Int) throws {
        guard FileManager.default.fileExists(atPath: Self.module) else {
            throw Failure(description: "nchan is not installed: apt-get install -y libnginx-mod-nchan")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("load-nchan-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let probe = LoopbackTCP.boundSocket(listening: false)
        close(probe.descriptor)
        port = probe.port
        process = try NginxProcess.start(
            directory: directory, port: port,
            main: """
                load_module \(Self.module);
                worker_processes \(workers);
                worker_rlimit_nofile \(connections + 1024);
                events { worker_connections \(connections + 512); }
                """,
            http: """
                access_log off;
                keepalive_requests 100000000;
                server {
                    listen 127.0.0.1:\(port) backlog=4096;
                    location = /pub {
                        nchan_publisher;
                        nchan_channel_id $arg_id;
                        nchan_message_buffer_length 1;
                        nchan_message_timeout 1h;
                    }
                    location = /sub {
                        nchan_subscriber eventsource;
                        nchan_channel_id $arg_id;
                        nchan_channel_id_split_delimiter ",";
                        nchan_eventsource_event presence;
                        nchan_subscriber_first_message oldest;
                    }
                }
                """)
    }

    public var errorLog: String {
        (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
    }

    /// The master and its workers: nchan's work is done in the workers.
    private var processIdentifiers: [Int32] {
        [process.processIdentifier] + childProcessIdentifiers(of: process.processIdentifier)
    }

    /// CPU seconds the master and workers have used so far.
    public func cpuSeconds() -> Double { processIdentifiers.map(processCPUSeconds).reduce(0, +) }

    /// The master's and workers' resident sets together, in bytes (the shared memory zone counted once per process
    /// that touched it, as VmRSS counts it).
    public func residentBytes() -> Int { processIdentifiers.map(processResidentBytes).reduce(0, +) }

    public func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }
}
