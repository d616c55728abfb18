import Foundation
import LoadSupport
import Logging
import PresenceService
import PresenceStore
import PresenceWire
import PresenceWorkload
import Synchronization

// Load on `presence serve`'s code over loopback, in one process with the service:
//  1. ingest: F feeders each send a generated stream of their own people as fast as the service takes it;
//     sustained stanzas/s until every update is applied.
//  2. queries under load: while the feeders keep sending, C clients on keep-alive connections ask
//     GET /v1/presence/{jid} for D seconds; requests/s and p50/p99 latency.
//
//   swift run -c release --package-path Benchmarks ServiceLoad [feeders] [updatesPerFeeder] [clients] [seconds] [ingestDuringQueries 1|0] [applyThreads] [eventLoops]

let arguments = Array(CommandLine.arguments.dropFirst()).compactMap { Int($0) }
let feeders = arguments.count > 0 ? arguments[0] : 4
let updatesPerFeeder = arguments.count > 1 ? arguments[1] : 250_000
let clients = arguments.count > 2 ? arguments[2] : 50
let seconds = arguments.count > 3 ? arguments[3] : 10
/// 1: feeders keep sending during the query phase (queries under load); 0: queries alone.
let ingestDuringQueries = arguments.count > 4 ? arguments[4] != 0 : true
/// The feed's applying threads (`presence serve --feed-apply-threads`).
let applyThreads = arguments.count > 5 ? arguments[5] : ServiceConfiguration.defaultApplyThreads
/// The event loops (`presence serve --event-loops`).
let eventLoops = arguments.count > 6 ? arguments[6] : ServiceConfiguration.defaultEventLoops

/// Prints a line at once (stdout may be a pipe).
func report(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func generatedStream(_ index: Int, updates: Int) -> [UInt8] {
    var generator = PresenceStreamGenerator(.init(users: 20_000, updates: updates, seed: UInt64(index + 1)))
    let text = String(decoding: generator.generate(), as: UTF8.self)
    // Each feeder speaks for its own people.
    return Array(text.replacingOccurrences(of: "@", with: "-f\(index)@").utf8)
}

func connect(port: Int) -> Int32 {
    do { return try LoopbackTCP.connect(port: port) } catch { fatalError("\(error)") }
}

func sendAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    (try? LoopbackTCP.sendAll(descriptor, bytes)) != nil
}

func stats(_ port: Int) -> ServiceStats {
    let response = try! LoadHTTP.get(port: port, path: "/v1/stats")
    return try! JSONDecoder().decode(ServiceStats.self, from: Data(response.body))
}

report("generating \(feeders) streams of \(updatesPerFeeder) updates...")
let streams = (0 ..< feeders).map { generatedStream($0, updates: updatesPerFeeder) }
let background = (0 ..< feeders).map { generatedStream($0 + 100, updates: 200_000) }
let stanzaTotal = streams.reduce(0) { $0 + $1.count }

var logger = Logger(label: "load")
logger.logLevel = .error
let storage = DictionaryMemoryStorage()
let server = PresenceServer(
    configuration: ServiceConfiguration(feedPort: 0, httpPort: 0, applyThreads: applyThreads, eventLoops: eventLoops), storage: storage,
    logger: logger)
let ready = DispatchSemaphore(value: 0)
nonisolated(unsafe) var ports: PresenceServer.BoundPorts? = nil
Task.detached {  // not on the main actor: the main thread blocks below
    try await server.run(signals: []) { bound, _ in
        ports = bound
        ready.signal()
    }
}
ready.wait()
let feedPort = ports!.feed
let httpPort = ports!.http
report("service on feed port \(feedPort), http port \(httpPort)")

// 1. Ingest.
let ingestStart = ContinuousClock.now
let expected = feeders * updatesPerFeeder
DispatchQueue.concurrentPerform(iterations: feeders) { index in
    let descriptor = connect(port: feedPort)
    streams[index].withUnsafeBytes { _ = sendAll(descriptor, $0) }
    close(descriptor)
}
while stats(httpPort).updatesApplied < expected { Thread.sleep(forTimeInterval: 0.005) }
let ingestSeconds = ingestStart.duration(to: .now).seconds
let ingestStats = stats(httpPort)
report(
    String(
        format:
            "ingest: %d feeders, %d updates (%d stanzas, %.1f MB) in %.2f s: %.0f updates/s, %.0f stanzas/s, %.1f MB/s",
        feeders, expected, ingestStats.stanzasRead, Double(stanzaTotal) / 1e6, ingestSeconds,
        Double(expected) / ingestSeconds, Double(ingestStats.stanzasRead) / ingestSeconds,
        Double(stanzaTotal) / 1e6 / ingestSeconds))

// 2. Queries under load.
let keys = storage.keys.map(\.rawValue)
let stop = ContinuousClock.now + .seconds(seconds)
let appliedBefore = stats(httpPort).updatesApplied
for index in 0 ..< (ingestDuringQueries ? feeders : 0) {
    Thread.detachNewThread {
        while ContinuousClock.now < stop {
            let descriptor = connect(port: feedPort)
            background[index].withUnsafeBytes { _ = sendAll(descriptor, $0) }
            close(descriptor)
        }
    }
}
let latencies = LatencyLog()
let done = DispatchGroup()
for client in 0 ..< clients {
    done.enter()
    Thread.detachNewThread {
        let connection = try! KeepAliveClient(port: httpPort)
        var local: [Double] = []
        var random = SplitMix64(seed: UInt64(client + 1))
        while ContinuousClock.now < stop {
            let jid = keys[random.below(keys.count)]
            let started = ContinuousClock.now
            let status = connection.get("/v1/presence/" + jid)?.status ?? -1
            local.append(started.duration(to: .now).seconds)
            precondition(status == 200, "query failed: \(status)")
        }
        latencies.append(local)
        done.leave()
    }
}
let queryStart = ContinuousClock.now
done.wait()
let querySeconds = queryStart.duration(to: .now).seconds
let appliedDuring = stats(httpPort).updatesApplied - appliedBefore
let sorted = latencies.all.sorted()
func percentile(_ p: Double) -> Double {
    sorted.isEmpty ? 0 : sorted[min(Int(Double(sorted.count) * p), sorted.count - 1)] * 1000
}
report(
    String(
        format:
            "queries: %d clients, %d requests in %.2f s: %.0f requests/s, p50 %.3f ms, p99 %.3f ms, max %.3f ms; %.0f updates/s applied meanwhile",
        clients, sorted.count, querySeconds, Double(sorted.count) / querySeconds, percentile(0.5), percentile(0.99),
        (sorted.last ?? 0) * 1000, Double(appliedDuring) / querySeconds))
exit(0)

/// Every client's latencies, collected under one lock (`Synchronization.Mutex`, the benchmarks' one idiom).
final class LatencyLog: Sendable {
    private let values = Mutex<[Double]>([])
    func append(_ more: [Double]) { values.withLock { $0 += more } }
    var all: [Double] { values.withLock { $0 } }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
