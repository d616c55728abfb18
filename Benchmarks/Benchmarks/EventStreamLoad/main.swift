// The change stream under load: `presence serve` (the release binary, its own process) with S open
// `GET /v1/presence/events` streams each watching J JIDs, while feeders apply visible changes at R per second.
//
//   swift build -c release --product presence
//   swift run -c release --package-path Benchmarks EventStreamLoad [streams] [jidsPerStream] [changes/s] [seconds] [most streams]
//
// 1. Change-to-delivery latency: each change's status text carries the monotonic time it was sent; each event
//    received is timed against the time in the status it delivers (coalescing delivers the latest one).
// 2. Capacity: streams opened in steps up to `most streams`, with the service's resident memory per stream.
//
// The streams are read by one SwiftNIO event loop in this process; the service is another process, as deployed.
import Foundation
import LoadSupport
import NIOCore
import NIOPosix
import Synchronization

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let streamCount = arguments.first ?? 1000
let jidsPerStream = arguments.dropFirst().first ?? 50
let changeRate = arguments.dropFirst(2).first ?? 5000
let windowSeconds = arguments.dropFirst(3).first ?? 10
let mostStreams = arguments.dropFirst(4).first ?? 10_000
let users = 10_000

func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

func jid(_ index: Int) -> String { "user\(index)@load.example.com" }

// MARK: The service, in its own process

let service = try ServiceProcess(arguments: ["--events-max-streams", String(mostStreams + 10)])
let (feedPort, httpPort) = (service.feedPort, service.httpPort)
report("presence serve (pid \(service.processIdentifier)) on feed \(feedPort), http \(httpPort)")

func serviceResidentBytes() -> Int { service.residentBytes() }

// Everyone exists before the streams open, so the snapshots are real answers.
let everyone = (0 ..< users).map { "<presence from='\(jid($0))/desk'><status>start</status></presence>" }.joined()
let setup = try LoopbackTCP.connect(port: feedPort)
try Array(everyone.utf8).withUnsafeBytes { try LoopbackTCP.sendAll(setup, $0) }
close(setup)
try await Task.sleep(for: .seconds(1))

// MARK: Stream readers on one event loop

final class Latencies: Sendable {
    let samples = Mutex<[UInt64]>([])
    let events = Atomic<Int>(0)
    let snapshotsDone = Atomic<Int>(0)
}
let latencies = Latencies()
let recording = Atomic<Bool>(false)

/// Reads one event stream: counts events, and times each delivered `t=<ns>` status against now. Scans the bytes
/// as they arrive without copying them (the reader must cost far less than the service it measures); the last
/// bytes of a read are carried over so that a marker split between two reads is still found.
final class StreamReader: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private static let event = Array("event: presence".utf8)
    private static let marker = Array("\"status\":\"t=".utf8)
    private var carry: [UInt8] = []
    private var snapshotLeft: Int

    init(snapshot: Int) { snapshotLeft = snapshot }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        let now = monotonicNanoseconds()
        var events = 0
        var found: [UInt64] = []
        func scan(_ bytes: UnsafeRawBufferPointer) -> Int {
            var index = 0
            var consumed = 0
            let count = bytes.count
            while index < count {
                let byte = bytes[index]
                if byte == 101, Self.matches(Self.event, in: bytes, at: index) {  // "e"
                    events += 1
                    index += Self.event.count
                    consumed = index
                    continue
                }
                if byte == 34, Self.matches(Self.marker, in: bytes, at: index) {  // "\""
                    var position = index + Self.marker.count
                    var value: UInt64 = 0
                    while position < count, bytes[position] >= 48, bytes[position] <= 57 {
                        value = value * 10 + UInt64(bytes[position] - 48)
                        position += 1
                    }
                    if position == count { break }  // the number continues in the next read
                    if value > 0 && value <= now { found.append(now - value) }
                    index = position
                    consumed = index
                    continue
                }
                index += 1
            }
            return max(consumed, count - 64)
        }
        if carry.isEmpty {
            let consumed = buffer.withUnsafeReadableBytes { scan($0) }
            buffer.withUnsafeReadableBytes { carry = Array($0[consumed...]) }
        } else {
            var joined = carry
            buffer.withUnsafeReadableBytes { joined += $0 }
            let consumed = joined.withUnsafeBytes { scan($0) }
            carry = Array(joined[consumed...])
        }
        if snapshotLeft > 0 {
            snapshotLeft -= events
            if snapshotLeft <= 0 { latencies.snapshotsDone.add(1, ordering: .relaxed) }
            return
        }
        latencies.events.add(events, ordering: .relaxed)
        if recording.load(ordering: .relaxed), !found.isEmpty {
            latencies.samples.withLock { $0 += found }
        }
    }

    private static func matches(_ pattern: [UInt8], in bytes: UnsafeRawBufferPointer, at index: Int) -> Bool {
        guard index + pattern.count <= bytes.count else { return false }
        for offset in 0 ..< pattern.count where bytes[index + offset] != pattern[offset] { return false }
        return true
    }
}

let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
func openStream(watching count: Int) async throws -> any Channel {
    var watched = Set<Int>()
    while watched.count < count { watched.insert(Int.random(in: 0 ..< users)) }
    let query = watched.map { "jid=" + jid($0) }.joined(separator: "&")
    let channel = try await ClientBootstrap(group: group)
        .channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(StreamReader(snapshot: count))
            }
        }
        .connect(host: "127.0.0.1", port: httpPort).get()
    var request = channel.allocator.buffer(capacity: query.utf8.count + 100)
    request.writeString(
        "GET /v1/presence/events?\(query) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
    try await channel.writeAndFlush(request)
    return channel
}

// MARK: 1. Latency under changes

var channels: [any Channel] = []
let residentBefore = serviceResidentBytes()
for _ in 0 ..< streamCount { channels.append(try await openStream(watching: jidsPerStream)) }
while latencies.snapshotsDone.load(ordering: .relaxed) < streamCount { try await Task.sleep(for: .milliseconds(20)) }
report(
    "\(streamCount) streams × \(jidsPerStream) JIDs open (of \(users) people); service resident memory "
        + "\(residentBefore / 1_048_576) → \(serviceResidentBytes() / 1_048_576) MiB")

let stopFeeding = Atomic<Bool>(false)
let sentChanges = Atomic<Int>(0)
let feeder = Thread {
    let descriptor = try! LoopbackTCP.connect(port: feedPort)
    defer { close(descriptor) }
    let perTick = max(1, changeRate / 1000)
    var next = monotonicNanoseconds()
    var round = 0
    while !stopFeeding.load(ordering: .relaxed) {
        var text = ""
        for _ in 0 ..< perTick {
            round += 1
            text +=
                "<presence from='\(jid(Int.random(in: 0..<users)))/desk'><status>t=\(monotonicNanoseconds()) \(round)</status></presence>"
        }
        try! Array(text.utf8).withUnsafeBytes { try LoopbackTCP.sendAll(descriptor, $0) }
        sentChanges.add(perTick, ordering: .relaxed)
        next += 1_000_000 * UInt64(perTick) * 1000 / UInt64(changeRate)
        let now = monotonicNanoseconds()
        if next > now { usleep(UInt32((next - now) / 1000)) }
    }
}
feeder.start()
try await Task.sleep(for: .seconds(2))
recording.store(true, ordering: .relaxed)
let eventsBefore = latencies.events.load(ordering: .relaxed)
let sentBefore = sentChanges.load(ordering: .relaxed)
let start = ContinuousClock.now
try await Task.sleep(for: .seconds(windowSeconds))
recording.store(false, ordering: .relaxed)
let window = seconds(ContinuousClock.now - start)
stopFeeding.store(true, ordering: .relaxed)
let samples = latencies.samples.withLock { $0 }.sorted()
func percentile(_ q: Double) -> Double {
    samples.isEmpty ? .nan : Double(samples[min(samples.count - 1, Int(q * Double(samples.count)))]) / 1e6
}
report(
    String(
        format: "changes sent %.0f/s; events delivered %.0f/s (%d timed); change-to-delivery p50 %.2f ms, "
            + "p99 %.2f ms, max %.2f ms",
        Double(sentChanges.load(ordering: .relaxed) - sentBefore) / window,
        Double(latencies.events.load(ordering: .relaxed) - eventsBefore) / window, samples.count, percentile(0.5),
        percentile(0.99), percentile(1)))
try await Task.sleep(for: .seconds(1))

// MARK: 2. Capacity

report("streams open  service resident  per stream (since none)")
var step = streamCount
while channels.count < mostStreams {
    step = min(mostStreams, channels.count * 2 > mostStreams ? mostStreams : channels.count * 2)
    let target = step
    let already = latencies.snapshotsDone.load(ordering: .relaxed)
    while channels.count < target {
        do { channels.append(try await openStream(watching: jidsPerStream)) } catch {
            report("opening stream \(channels.count + 1) failed: \(error)")
            break
        }
    }
    let opened = channels.count
    let deadline = ContinuousClock.now + .seconds(60)
    while latencies.snapshotsDone.load(ordering: .relaxed) - already < opened - (already)
        && ContinuousClock.now < deadline
    {
        try await Task.sleep(for: .milliseconds(50))
    }
    try await Task.sleep(for: .seconds(1))
    let resident = serviceResidentBytes()
    report(
        String(
            format: "%12d  %12.1f MiB  %8.1f KiB", opened, Double(resident) / 1_048_576,
            Double(resident - residentBefore) / Double(opened) / 1024))
    if opened < target { break }
}
for channel in channels { channel.close(promise: nil) }
service.stop()
try await group.shutdownGracefully()
