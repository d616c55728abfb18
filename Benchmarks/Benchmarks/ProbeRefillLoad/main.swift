// Refill by probe against a real Prosody or ejabberd on loopback, measured the way image caches are compared: how long a
// lookup takes by where its answer comes from, and what an evicting storage costs the server instead of losing
// statuses for good.
//
//   swift run --package-path Benchmarks -c release ProbeRefillLoad [members] [lookups/s] [seconds] [gc] [server]
//
// `members` accounts (default 1,000), 80% of them logged in with a status of their own, the rest offline; the
// watcher is `presence serve`'s own `PresenceServer` with its XMPP source, run in this process. `gc` is
// Prosody's garbage collector mode: `incremental` (its default) or `generational`. `server` is `prosody` (the
// default) or `ejabberd`.
//
// 1. Latency, one lookup at a time: through the library (`PresenceLookup`, the code behind the HTTP API) and as
//    one HTTP GET on a fresh loopback connection. Answered by the dictionary, by an LRU holding the user, by an
//    LRU of 10% of the roster after eviction (`cache-else-probe`: a refill by probe), and by `probe` for an online
//    member (at several settle windows) and for an offline one.
// 2. Load: a steady open-loop mix of single-user lookups (Zipf-distributed popularity, s = 1) at `lookups/s` for
//    `seconds` after a warm-up, with the default probe budget (200/s), for LRUs of 10%, 50% and 90% of the roster
//    and the dictionary: hit ratio, probes/s sent and refused, latency, and Prosody's CPU.
import Foundation
import Logging
import PresenceModel
import PresenceService
import PresenceSource
import PresenceStore
import PresenceWorkload
import LoadSupport
import Synchronization
import XMPPClient
import XMPPStream

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let memberCount = arguments.first ?? 1000
let lookupRate = arguments.dropFirst().first ?? 1000
let mixSeconds = arguments.dropFirst(2).first ?? 10
let onlineCount = memberCount * 8 / 10

let garbageCollector = CommandLine.arguments.dropFirst(4).first ?? "incremental"
let serverKind = CommandLine.arguments.dropFirst(5).first ?? "prosody"
let server = try startLoadServer(serverKind, members: memberCount, garbageCollector: garbageCollector)
defer { server.stop() }
let members = (0 ..< memberCount).map { try! BareJID("\(LoadAccounts.member($0))@\(server.domain)") }

// MARK: Members

let endGate = Gate()
let loggedIn = Atomic<Int>(0)
let loginFailures = Atomic<Int>(0)
let ending = Atomic<Bool>(false)
let memberTasks = Task {
    await withTaskGroup(of: Void.self) { group in
        for index in 0 ..< onlineCount {
            group.addTask {
                let configuration = XMPPClientConfiguration(
                    account: members[index], password: LoadAccounts.password, resource: "desk", host: "127.0.0.1",
                    port: server.port, tls: .off, keepAlive: nil)
                do {
                    try await XMPPConnection.withSession(configuration) { session in
                        var writer = XMPPWriter()
                        writer.presence(show: "away", status: "Member \(index) in a meeting", priority: 1)
                        try await session.send(writer.bytes)
                        loggedIn.add(1, ordering: .relaxed)
                        await endGate.wait()
                    }
                } catch {
                    loginFailures.add(1, ordering: .relaxed)
                    if !ending.load(ordering: .relaxed) { report("member \(index): \(error)") }
                }
            }
            // In waves of 64, each logged in before the next: a server's SCRAM work is per login.
            if index % 64 == 63 {
                while loggedIn.load(ordering: .relaxed) + loginFailures.load(ordering: .relaxed) <= index {
                    try? await Task.sleep(for: .milliseconds(5))
                }
            }
        }
    }
}
while loggedIn.load(ordering: .relaxed) + loginFailures.load(ordering: .relaxed) < onlineCount {
    try await Task.sleep(for: .milliseconds(20))
}
guard loginFailures.load(ordering: .relaxed) == 0 else { fatalError("members failed to log in") }
report(
    "\(server.name) on 127.0.0.1:\(server.port)\(serverKind == "prosody" ? " (gc \(garbageCollector))" : ""): "
        + "\(memberCount) members, \(onlineCount) logged in "
        + "with a status")

// MARK: The service under test

let logger = {
    var logger = Logger(label: "refill-load")
    logger.logLevel = .error
    return logger
}()

/// A running `PresenceServer` watching the server as `presence serve --xmpp-jid` does, on `storage`.
struct Watcher {
    let server: PresenceServer
    let httpPort: Int
    let group: Task<Void, any Error>
    let stop: @Sendable () async -> Void
}

let watchers = Atomic<Int>(0)

func startWatcher(
    storage: any MemoryStorage, probesPerSecond: Double,
    settle: Duration = XMPPPresenceSource.AnswerConfiguration.defaultSettle
) async throws -> Watcher {
    let resource = "bench-\(watchers.add(1, ordering: .relaxed).newValue)"
    let source = XMPPPresenceSource(
        configuration: XMPPClientConfiguration(
            account: try BareJID("watcher@\(server.domain)"), password: LoadAccounts.password, resource: resource,
            host: "127.0.0.1", port: server.port, tls: .off),
        // No periodic resync: its probes would mix with the refill's; ResyncCost measures them on their own.
        storage: storage, answering: .init(settle: settle), resync: nil, logger: logger)
    let service = PresenceServer(
        configuration: ServiceConfiguration(
            feedPort: 0, httpPort: 0, lookup: .init(probesPerSecond: probesPerSecond)),
        storage: storage, xmppSource: source, logger: logger)
    let (started, continuation) = AsyncStream.makeStream(of: (Int, @Sendable () async -> Void).self)
    let group = Task {
        try await service.run(signals: []) { ports, group in
            continuation.yield((ports.http, { await group.triggerGracefulShutdown() }))
        }
    }
    var iterator = started.makeAsyncIterator()
    guard let (httpPort, stop) = await iterator.next() else { fatalError("the service did not start") }
    while !source.isLive { try await Task.sleep(for: .milliseconds(5)) }
    return Watcher(server: service, httpPort: httpPort, group: group, stop: stop)
}

func stopWatcher(_ watcher: Watcher) async {
    await watcher.stop()
    _ = try? await watcher.group.value
}

// MARK: Measuring

/// Percentiles of a sample, in milliseconds.
func percentiles(_ samples: [Double]) -> (p50: Double, p99: Double) {
    let sorted = samples.sorted()
    guard !sorted.isEmpty else { return (.nan, .nan) }
    func at(_ q: Double) -> Double { sorted[min(sorted.count - 1, Int((q * Double(sorted.count)).rounded(.up)) - 1)] }
    return (at(0.5) * 1000, at(0.99) * 1000)
}

/// Runs `body` on a thread of its own (blocking HTTP calls must not hold a thread of the concurrency pool).
func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: body()) }
    }
}

/// Library and HTTP latency of `count` lookups, one at a time, of the JIDs `pick` chooses.
func latency(
    _ watcher: Watcher, policy: LookupPolicy, count: Int, expecting origin: AnswerOrigin,
    pick: @escaping @Sendable (Int) -> BareJID
) async -> (library: (Double, Double), http: (Double, Double), unexpected: Int) {
    var library: [Double] = []
    var unexpected = 0
    for index in 0 ..< count {
        let start = ContinuousClock.now
        let answer = await watcher.server.lookup.lookup(pick(index), policy: policy)
        library.append(seconds(ContinuousClock.now - start))
        if answer.origin != origin { unexpected += 1 }
    }
    let port = watcher.httpPort
    let (http, httpUnexpected) = await onThread { () -> ([Double], Int) in
        var samples: [Double] = []
        var unexpected = 0
        for index in count ..< (2 * count) {
            let path = "/v1/presence/\(pick(index).rawValue)?policy=\(policy.rawValue)"
            let start = ContinuousClock.now
            let response = try? LoadHTTP.get(port: port, path: path)
            samples.append(seconds(ContinuousClock.now - start))
            let body = response.map { String(decoding: $0.body, as: UTF8.self) } ?? ""
            if !body.contains("\"origin\":\"\(origin.rawValue)\"") { unexpected += 1 }
        }
        return (samples, unexpected)
    }
    return (percentiles(library), percentiles(http), unexpected + httpUnexpected)
}

func row(_ label: String, _ result: (library: (Double, Double), http: (Double, Double), unexpected: Int)) {
    report(
        label.padding(toLength: 44, withPad: " ", startingAt: 0)
            + String(
                format: "%8.3f  %8.3f  %8.3f  %8.3f  %d", result.library.0, result.library.1, result.http.0,
                result.http.1, result.unexpected))
}

// MARK: 1. Latency by where the answer comes from

let samples = 2000
report("\nlookup answered by                          lib p50   lib p99  http p50  http p99  (ms; wrong origin)")
do {
    // The server's own time: a probe of an online member written on a plain session, until that member's
    // presence arrives.
    let configuration = XMPPClientConfiguration(
        account: try BareJID("watcher@\(server.domain)"), password: LoadAccounts.password, resource: "raw",
        host: "127.0.0.1", port: server.port, tls: .off)
    let targets = Array(members.prefix(onlineCount))
    let times = try await Task.detached {
        try await XMPPConnection.withSession(configuration) { session in
            var times: [Double] = []
            for index in 0..<samples {
                let target = targets[(index * 7919) % targets.count]
                var writer = XMPPWriter()
                writer.presence(type: "probe", to: target.rawValue)
                let start = ContinuousClock.now
                try await session.send(writer.bytes)
                while let stanza = try await session.next() {
                    if stanza.isElement(stanza.root, named: "presence", in: XMPPNamespace.client),
                        let from = stanza.attribute("from", of: stanza.root), from.hasPrefix(target.rawValue + "/")
                    {
                        break
                    }
                }
                times.append(seconds(ContinuousClock.now - start))
            }
            return times
        }
    }.value
    let (p50, p99) = percentiles(times)
    report(
        "\(server.name) alone: probe until the presence".padding(toLength: 44, withPad: " ", startingAt: 0)
            + String(format: "%8.3f  %8.3f", p50, p99))
}
do {
    let watcher = try await startWatcher(storage: DictionaryMemoryStorage(), probesPerSecond: 1_000_000)
    row(
        "dictionary",
        await latency(watcher, policy: .cacheElseProbe, count: samples, expecting: .storage) {
            members[($0 * 7919) % memberCount]
        })
    row(
        "probe policy, offline member",
        await latency(watcher, policy: .probe, count: samples / 4, expecting: .probe) {
            members[onlineCount + ($0 * 7919) % (memberCount - onlineCount)]
        })
    await stopWatcher(watcher)
}
// What the settle window costs an online member's answer (the wait for their other resources).
for settle in [0, 10, 50] {
    let watcher = try await startWatcher(
        storage: DictionaryMemoryStorage(), probesPerSecond: 1_000_000, settle: .milliseconds(settle))
    row(
        "probe policy, online member, settle \(settle) ms",
        await latency(watcher, policy: .probe, count: samples / 4, expecting: .probe) {
            members[($0 * 7919) % onlineCount]
        })
    await stopWatcher(watcher)
}
do {
    let watcher = try await startWatcher(
        storage: LRUMemoryStorage(countLimit: memberCount), probesPerSecond: 1_000_000)
    row(
        "LRU holding the user (hit)",
        await latency(watcher, policy: .cacheElseProbe, count: samples, expecting: .storage) {
            members[($0 * 7919) % memberCount]
        })
    await stopWatcher(watcher)
}
do {
    let watcher = try await startWatcher(
        storage: LRUMemoryStorage(countLimit: memberCount / 10), probesPerSecond: 1_000_000)
    // A scan over everyone: in an LRU of 10% every next user was evicted long ago. The LRU is first filled with
    // the last tenth of the scan, so that none of the users it held after the snapshot is met.
    for member in members.suffix(memberCount / 10) {
        _ = await watcher.server.lookup.lookup(member, policy: .cacheElseProbe)
    }
    row(
        "LRU 10%, evicted user (cache-else-probe)",
        await latency(watcher, policy: .cacheElseProbe, count: samples / 4, expecting: .probe) {
            members[$0 % memberCount]
        })
    await stopWatcher(watcher)
}

// MARK: 2. Server load under a steady mix

/// Zipf(s = 1) over the members, most popular first in a fixed shuffled order.
struct Popularity: Sendable {
    let order: [Int]
    let cumulative: [Double]
    init(count: Int) {
        var random = SplitMix64(seed: 42)
        var order = Array(0 ..< count)
        for index in stride(from: count - 1, to: 0, by: -1) { order.swapAt(index, random.below(index + 1)) }
        self.order = order
        var total = 0.0
        cumulative = (1 ... count).map { rank in
            total += 1 / Double(rank)
            return total
        }.map { $0 / total }
    }
    func member(_ u: Double) -> Int {
        var low = 0
        var high = cumulative.count - 1
        while low < high {
            let mid = (low + high) / 2
            if cumulative[mid] < u { low = mid + 1 } else { high = mid }
        }
        return order[low]
    }
}
let popularity = Popularity(count: memberCount)

/// What the mix's lookups saw, recorded from many tasks.
final class MixResults: Sendable {
    let state = Mutex<(latencies: [Double], fromProbe: Int, lost: Int)>(([], 0, 0))
}

/// Runs the mix for `duration` at `rate` lookups/s; returns the latencies and the lookups' origins.
func mix(
    _ lookup: PresenceLookup, rate: Int, for duration: Duration, seed: UInt64
) async -> (
    latencies: [Double], fromProbe: Int, lost: Int, count: Int
) {
    let results = MixResults()
    var random = SplitMix64(seed: seed)
    let interval = Duration.nanoseconds(1_000_000_000 / rate)
    let total = Int(seconds(duration) * Double(rate))
    await withTaskGroup(of: Void.self) { group in
        var next = ContinuousClock.now
        for _ in 0 ..< total {
            let jid = members[popularity.member(random.unit())]
            group.addTask {
                let start = ContinuousClock.now
                let answer = await lookup.lookup(jid, policy: .cacheElseProbe)
                let elapsed = seconds(ContinuousClock.now - start)
                results.state.withLock { results in
                    results.latencies.append(elapsed)
                    if answer.origin == .probe { results.fromProbe += 1 }
                    if answer.origin == .none { results.lost += 1 }
                }
            }
            next += interval
            try? await Task.sleep(until: next)
        }
    }
    return results.state.withLock { ($0.latencies, $0.fromProbe, $0.lost, total) }
}

report(
    "\nsteady mix: \(lookupRate) lookups/s, Zipf s=1 over \(memberCount) members, \(mixSeconds) s after 3 s warm-up, "
        + "probe budget 200/s")
report("storage          hit     probes/s  refused/s  lost  p50 ms  p99 ms  \(server.name) CPU")
for (label, storage) in [
    ("LRU 10%", LRUMemoryStorage(countLimit: memberCount / 10) as any MemoryStorage),
    ("LRU 50%", LRUMemoryStorage(countLimit: memberCount / 2)),
    ("LRU 90%", LRUMemoryStorage(countLimit: memberCount * 9 / 10)),
    ("dictionary", DictionaryMemoryStorage()),
] {
    let watcher = try await startWatcher(storage: storage, probesPerSecond: 200)
    let lookup = watcher.server.lookup
    _ = await mix(lookup, rate: lookupRate, for: .seconds(3), seed: 1)
    let before = lookup.statistics
    let cpuBefore = server.cpuSeconds()
    let start = ContinuousClock.now
    let result = await mix(lookup, rate: lookupRate, for: .seconds(mixSeconds), seed: 2)
    let window = seconds(ContinuousClock.now - start)
    let after = lookup.statistics
    let (p50, p99) = percentiles(result.latencies)
    let hits = result.count - result.fromProbe - result.lost
    report(
        label.padding(toLength: 15, withPad: " ", startingAt: 0)
            + String(
                format: "%5.1f%%  %9.1f  %9.1f  %4d  %6.3f  %6.3f  %10.1f%%",
                Double(hits) / Double(result.count) * 100, Double(after.sent - before.sent) / window,
                Double(after.refusedByBudget - before.refusedByBudget) / window, result.lost, p50, p99,
                (server.cpuSeconds() - cpuBefore) / window * 100))
    await stopWatcher(watcher)
}

ending.store(true, ordering: .relaxed)
endGate.open()
memberTasks.cancel()
