// The change stream under load: `presence serve` (the release binary, its own process) with S open
// `GET /v1/presence/events` streams each watching J JIDs, while a feeder applies visible changes at R per second.
//
//   swift build -c release --product presence
//   swift run -c release --package-path Benchmarks EventStreamLoad [streams] [jidsPerStream] [changes/s] [seconds] [most streams]
//   swift run -c release --package-path Benchmarks EventStreamLoad --versus-nchan [--nchan-workers=N] [--rounds=N] [streams] [jidsPerStream] [changes/s] [seconds]
//   swift run -c release --package-path Benchmarks EventStreamLoad --mixed [--rounds=N] [streams] [jidsPerStream] [changes/s] [seconds]
//
// 1. Change-to-delivery latency: each change's status text carries the monotonic time it was sent; each event
//    received is timed against the time in the status it delivers (coalescing delivers the latest one). The
//    server's CPU over the window gives its CPU per delivered event.
// 2. Capacity: streams opened in steps up to `most streams`, with the service's resident memory per stream.
//
// With `--versus-nchan`, step 1 runs twice with the same streams, the same people watched by each and the same
// rate of changes to people drawn at random:
// against the service, then against nginx + nchan (`apt-get install -y libnginx-mod-nchan`), the reference push
// server, where each person is a channel, a stream subscribes to its people's channels, and a change is a
// `POST /pub?id=<person's local part>` of the answer the service would send. Step 2 is skipped. The two are
// measured in rounds (`--rounds`, 3 by default), each server started afresh for each window and the order swapped
// from one round to the next (service first, then nchan first, ...): a machine whose speed drifts during the run
// weighs on both, and the ratio is given per round and as the median of the rounds.
//
// With `--mixed`, the workload a replica carries: step 1 with `wrk -t2 -c50` asking one person's presence
// (`GET /v1/presence/{jid}`) flat out for the whole window, beside the streams and the feeder, once with one event
// loop (`--event-loops 1`) and once with two, the order swapped from round to round. It reports the queries answered
// and their latency with the events delivered and theirs, so that a default is chosen on the mix, never on one
// workload alone. Needs wrk (Debian: `wrk`).
//
// The streams are read by one SwiftNIO event loop in this process; each server is another process, as deployed.
import Foundation
import LoadSupport
import NIOCore
import NIOPosix
import Synchronization

let flags = Array(CommandLine.arguments.dropFirst())
let versusNchan = flags.contains("--versus-nchan")
let mixed = flags.contains("--mixed")
let nchanWorkers = flags.first { $0.hasPrefix("--nchan-workers=") }.flatMap { Int($0.dropFirst(16)) } ?? 1
let rounds = max(1, flags.first { $0.hasPrefix("--rounds=") }.flatMap { Int($0.dropFirst(9)) } ?? 3)
let arguments = flags.compactMap { Int($0) }
let streamCount = arguments.first ?? 1000
let jidsPerStream = arguments.dropFirst().first ?? 50
let changeRate = arguments.dropFirst(2).first ?? 5000
let windowSeconds = arguments.dropFirst(3).first ?? 10
// Never fewer than the measured streams: a stream count over the default needs no fifth argument.
let mostStreams = versusNchan || mixed ? streamCount : max(streamCount, arguments.dropFirst(4).first ?? 10_000)
let users = 10_000

func jid(_ index: Int) -> String { "user\(index)@load.example.com" }

// MARK: The servers, each in its own process

/// A server the streams read from: how a stream for some people is asked for, how a change is published, and
/// what the server's processes have used so far.
struct PushServer: Sendable {
    let name: String
    let httpPort: Int
    let publishPort: Int
    /// The request path of one stream watching these people.
    let streamPath: @Sendable ([String]) -> String
    /// One change on the publishing connection: a person's new status.
    let publication: @Sendable (_ jid: String, _ status: String) -> String
    /// Whether the publishing connection answers each change (HTTP) and its answers must be read.
    let answersPublications: Bool
    let cpuSeconds: @Sendable () -> Double
    let residentBytes: @Sendable () -> Int
    let stop: @Sendable () -> Void
    /// A query of one person's presence, for `--mixed`.
    var queryPath: String? = nil
}

/// `presence serve` with its defaults, or with `loops` event loops.
func presenceServer(loops: Int? = nil) throws -> PushServer {
    let service = try ServiceProcess(
        arguments: ["--events-max-streams", String(mostStreams + 10)] + (loops.map { ["--event-loops", "\($0)"] } ?? []))
    let name = loops.map { "presence serve, \($0) loop\($0 == 1 ? "" : "s")" } ?? "presence serve"
    report("\(name) (pid \(service.processIdentifier)) on feed \(service.feedPort), http \(service.httpPort)")
    return PushServer(
        name: name, httpPort: service.httpPort, publishPort: service.feedPort,
        streamPath: { "/v1/presence/events?" + $0.map { "jid=" + $0 }.joined(separator: "&") },
        publication: { "<presence from='\($0)/desk'><status>\($1)</status></presence>" },
        answersPublications: false, cpuSeconds: service.cpuSeconds, residentBytes: service.residentBytes,
        stop: { service.stop() }, queryPath: "/v1/presence/\(jid(0))")
}

func nchanServer() throws -> PushServer {
    let nchan = try LoadNchan(workers: nchanWorkers, connections: streamCount + 64)
    report("nginx + nchan (\(nchanWorkers) worker(s)) on \(nchan.port)")
    // The message is the answer the service sends for an available person, field for field.
    @Sendable func answer(_ jid: String, _ status: String) -> String {
        #"{"asOf":"2026-11-26T12:00:00.000Z","attendance":null,"cause":null,"jid":"\#(jid)","live":true,"#
            + #""origin":"feed","partial":false,"priority":0,"probeFailure":null,"resource":"desk","show":null,"#
            + #""since":"2026-11-26T12:00:00.000Z","state":"available","status":"\#(status)"}"#
    }
    return PushServer(
        name: "nginx + nchan", httpPort: nchan.port, publishPort: nchan.port,
        // A channel is named by the person's local part: nchan allows 1,024 bytes of channel names per stream.
        streamPath: { "/sub?id=" + $0.map { $0.prefix { $0 != "@" } }.joined(separator: ",") },
        publication: { jid, status in
            let body = answer(jid, status)
            return
                "POST /pub?id=\(jid.prefix { $0 != "@" }) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        },
        answersPublications: true, cpuSeconds: nchan.cpuSeconds, residentBytes: nchan.residentBytes,
        stop: { nchan.stop() })
}

/// A connection that publishes changes, with a thread that reads and drops the server's answers if it sends any.
final class Publisher: Sendable {
    let descriptor: Int32
    let server: PushServer

    init(_ server: PushServer) throws {
        self.server = server
        descriptor = try LoopbackTCP.connect(port: server.publishPort)
        if server.answersPublications {
            let descriptor = self.descriptor
            Thread.detachNewThread {
                var sink = [UInt8](repeating: 0, count: 65536)
                while recv(descriptor, &sink, sink.count, 0) > 0 {}
            }
        }
    }

    func publish(_ changes: [(jid: String, status: String)]) throws {
        let text = changes.map { server.publication($0.jid, $0.status) }.joined()
        try Array(text.utf8).withUnsafeBytes { try LoopbackTCP.sendAll(descriptor, $0) }
    }

    func close() { shutdown(descriptor, Int32(SHUT_RDWR)); Glibc.close(descriptor) }
}

/// Everyone gets a status before the streams open, so the snapshots are real answers.
func publishEveryone(to server: PushServer) throws {
    let publisher = try Publisher(server)
    for batch in stride(from: 0, to: users, by: 1000) {
        try publisher.publish((batch ..< min(users, batch + 1000)).map { (jid($0), "start") })
    }
    Thread.sleep(forTimeInterval: 1)
    publisher.close()
}

// MARK: Stream readers on one event loop (`EventStreamReader` in LoadSupport)

let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)

/// The people each stream watches: the same for every server measured.
let watchedSets: [[Int]] = (0 ..< mostStreams).map { _ in
    var people = Set<Int>()
    while people.count < jidsPerStream { people.insert(Int.random(in: 0 ..< users)) }
    return Array(people)
}

func openStream(_ index: Int, on server: PushServer, into latencies: Latencies) async throws -> any Channel {
    let path = server.streamPath(watchedSets[index].map(jid))
    let channel = try await ClientBootstrap(group: group)
        .channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(StreamReader(snapshot: jidsPerStream, into: latencies))
            }
        }
        .connect(host: "127.0.0.1", port: server.httpPort).get()
    var request = channel.allocator.buffer(capacity: path.utf8.count + 100)
    request.writeString("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
    try await channel.writeAndFlush(request)
    return channel
}

struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// What one server did in the measured window.
struct Measurement {
    let changesPerSecond: Double
    let eventsPerSecond: Double
    let cpuSeconds: Double
    let windowSeconds: Double
    let samples: [UInt64]
    let residentPerStream: Double
    /// What wrk got in the window, with `--mixed`.
    let queries: WrkRun.Result?

    var cpuMicrosecondsPerEvent: Double { cpuSeconds * 1e6 / (eventsPerSecond * windowSeconds) }
    var cpuShare: Double { cpuSeconds / windowSeconds }

    func percentile(_ q: Double) -> Double {
        samples.isEmpty ? .nan : Double(samples[min(samples.count - 1, Int(q * Double(samples.count)))]) / 1e6
    }
}

/// Opens the streams on `server`, waits for their snapshots, publishes `changeRate` changes a second of random
/// people for a warm-up and the window, and measures delivery in the window. Returns
/// the measurement and the streams, still open.
func measureDelivery(
    on server: PushServer, into latencies: Latencies
) async throws -> (Measurement, [any Channel]) {
    var channels: [any Channel] = []
    let residentBefore = server.residentBytes()
    for index in 0 ..< streamCount { channels.append(try await openStream(index, on: server, into: latencies)) }
    let deadline = ContinuousClock.now + .seconds(120)
    while latencies.snapshotsDone.load(ordering: .relaxed) < streamCount {
        guard ContinuousClock.now < deadline else {
            throw Failure(
                "\(server.name): \(latencies.snapshotsDone.load(ordering: .relaxed)) of \(streamCount) snapshots "
                    + "came in two minutes")
        }
        try await Task.sleep(for: .milliseconds(20))
    }
    try await Task.sleep(for: .seconds(1))
    let residentOpen = server.residentBytes()
    report(
        "\(server.name): \(streamCount) streams × \(jidsPerStream) JIDs open (of \(users) people); resident memory "
            + "\(residentBefore / 1_048_576) → \(residentOpen / 1_048_576) MiB")

    let stopFeeding = Atomic<Bool>(false)
    let sentChanges = Atomic<Int>(0)
    let publisher = try Publisher(server)
    let feederDone = Atomic<Bool>(false)
    let feeder = Thread {
        defer { feederDone.store(true, ordering: .releasing) }
        let perTick = max(1, changeRate / 1000)
        var next = monotonicNanoseconds()
        var round = 0
        while !stopFeeding.load(ordering: .relaxed) {
            var changes: [(jid: String, status: String)] = []
            for _ in 0 ..< perTick {
                round += 1
                changes.append((jid(Int.random(in: 0 ..< users)), "t=\(monotonicNanoseconds()) \(round)"))
            }
            // A server that closed the publishing connection ends the feeding; the window says what it took.
            guard (try? publisher.publish(changes)) != nil else { return }
            sentChanges.add(perTick, ordering: .relaxed)
            next += 1_000_000 * UInt64(perTick) * 1000 / UInt64(changeRate)
            let now = monotonicNanoseconds()
            if next > now { usleep(UInt32((next - now) / 1000)) }
        }
    }
    feeder.start()
    try await Task.sleep(for: .seconds(2))
    latencies.recording.store(true, ordering: .relaxed)
    let eventsBefore = latencies.events.load(ordering: .relaxed)
    let sentBefore = sentChanges.load(ordering: .relaxed)
    let cpuBefore = server.cpuSeconds()
    let start = ContinuousClock.now
    let asking = try server.queryPath.flatMap { path in
        mixed ? try WrkRun(url: "http://127.0.0.1:\(server.httpPort)\(path)", seconds: windowSeconds) : nil
    }
    try await Task.sleep(for: .seconds(windowSeconds))
    let queries = asking?.result()
    let cpuAfter = server.cpuSeconds()
    latencies.recording.store(false, ordering: .relaxed)
    let window = seconds(ContinuousClock.now - start)
    let eventsAfter = latencies.events.load(ordering: .relaxed)
    stopFeeding.store(true, ordering: .relaxed)
    // The feeder may be blocked in a send to a server that fell behind: it finishes its send first.
    while !feederDone.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(50)) }
    publisher.close()
    let measurement = Measurement(
        changesPerSecond: Double(sentChanges.load(ordering: .relaxed) - sentBefore) / window,
        eventsPerSecond: Double(eventsAfter - eventsBefore) / window, cpuSeconds: cpuAfter - cpuBefore,
        windowSeconds: window, samples: latencies.samples.withLock { $0 }.sorted(),
        residentPerStream: Double(residentOpen - residentBefore) / Double(streamCount), queries: queries)
    if let queries {
        report(
            String(
                format: "%@: queries answered %.0f/s, p50 %.2f ms, p99 %.2f ms (wrk -t2 -c50, beside the streams)",
                server.name, queries.requestsPerSecond, queries.p50, queries.p99))
    }
    report(
        String(
            format: "%@: changes sent %.0f/s; events delivered %.0f/s (%d timed); change-to-delivery p50 %.2f ms, "
                + "p99 %.2f ms, max %.2f ms; CPU %.1f%% of a core, %.2f µs per delivered event; "
                + "%.1f KiB resident per stream",
            server.name, measurement.changesPerSecond, measurement.eventsPerSecond, measurement.samples.count,
            measurement.percentile(0.5), measurement.percentile(0.99), measurement.percentile(1),
            measurement.cpuShare * 100, measurement.cpuMicrosecondsPerEvent, measurement.residentPerStream / 1024))
    return (measurement, channels)
}

// MARK: 1. Latency and CPU under changes

/// Starts a server, gives everyone a status, measures one window of delivery, then closes its streams and stops it.
func measureAfresh(_ start: () throws -> PushServer) async throws -> Measurement {
    let server = try start()
    defer { server.stop() }
    try publishEveryone(to: server)
    let (measurement, channels) = try await measureDelivery(on: server, into: Latencies())
    // Every stream closed before the next server opens its own: the reader's descriptors are counted against
    // the same open-file limit.
    try? await EventLoopFuture.andAllComplete(channels.map { $0.close() }, on: group.next()).get()
    return measurement
}

if versusNchan {
    var ratios: [Double] = []
    var service: [Measurement] = []
    var nchan: [Measurement] = []
    for round in 1 ... rounds {
        if round % 2 == 1 {
            service.append(try await measureAfresh { try presenceServer() })
            nchan.append(try await measureAfresh(nchanServer))
        } else {
            nchan.append(try await measureAfresh(nchanServer))
            service.append(try await measureAfresh { try presenceServer() })
        }
        let (ours, theirs) = (service[round - 1].cpuMicrosecondsPerEvent, nchan[round - 1].cpuMicrosecondsPerEvent)
        ratios.append(ours / theirs)
        report(
            String(
                format: "round %d of %d: CPU per delivered event: presence serve %.2f µs, nginx + nchan %.2f µs: "
                    + "%.2f of nchan's",
                round, rounds, ours, theirs, ours / theirs))
    }
    func range(_ measurements: [Measurement]) -> String {
        let values = measurements.map(\.cpuMicrosecondsPerEvent)
        return String(format: "%.2f-%.2f µs", values.min() ?? .nan, values.max() ?? .nan)
    }
    let sorted = ratios.sorted()
    report(
        String(
            format: "over %d rounds: CPU per delivered event %.2f of nchan's (median; rounds %.2f-%.2f); "
                + "presence serve %@, nginx + nchan %@",
            rounds, sorted[sorted.count / 2], sorted.first ?? .nan, sorted.last ?? .nan, range(service),
            range(nchan)))
    try await group.shutdownGracefully()
    exit(0)
}

if mixed {
    var byLoops: [Int: [Measurement]] = [1: [], 2: []]
    for round in 1 ... rounds {
        for loops in round % 2 == 1 ? [1, 2] : [2, 1] {
            byLoops[loops]!.append(try await measureAfresh { try presenceServer(loops: loops) })
        }
    }
    for loops in [1, 2] {
        let runs = byLoops[loops]!
        func span(_ values: [Double], _ format: String) -> String {
            String(format: format + "-" + format, values.min() ?? .nan, values.max() ?? .nan)
        }
        report(
            "\(loops) loop\(loops == 1 ? "" : "s"), \(rounds) rounds: queries "
                + span(runs.compactMap { $0.queries?.requestsPerSecond }, "%.0f") + "/s (p99 "
                + span(runs.compactMap { $0.queries?.p99 }, "%.2f") + " ms); events "
                + span(runs.map(\.eventsPerSecond), "%.0f") + "/s (p99 "
                + span(runs.map { $0.percentile(0.99) }, "%.2f") + " ms); CPU "
                + span(runs.map { $0.cpuShare * 100 }, "%.0f") + "% of a core")
    }
    try await group.shutdownGracefully()
    exit(0)
}

let service = try presenceServer()
try publishEveryone(to: service)
let serviceLatencies = Latencies()
let residentBefore = service.residentBytes()
var channels = try await measureDelivery(on: service, into: serviceLatencies).1

// MARK: 2. Capacity

report("streams open  service resident  per stream (since none)")
var step = streamCount
while channels.count < mostStreams {
    step = min(mostStreams, channels.count * 2 > mostStreams ? mostStreams : channels.count * 2)
    let target = step
    while channels.count < target {
        do { channels.append(try await openStream(channels.count, on: service, into: serviceLatencies)) } catch {
            report("opening stream \(channels.count + 1) failed: \(error)")
            break
        }
    }
    let opened = channels.count
    let deadline = ContinuousClock.now + .seconds(60)
    while serviceLatencies.snapshotsDone.load(ordering: .relaxed) < opened && ContinuousClock.now < deadline {
        try await Task.sleep(for: .milliseconds(50))
    }
    try await Task.sleep(for: .seconds(1))
    let resident = service.residentBytes()
    report(
        String(
            format: "%12d  %12.1f MiB  %8.1f KiB", opened, Double(resident) / 1_048_576,
            Double(resident - residentBefore) / Double(opened) / 1024))
    if opened < target { break }
}
for channel in channels { channel.close(promise: nil) }
service.stop()
try await group.shutdownGracefully()
