// Replicas on one watcher account, on a real Prosody: what each replica costs the XMPP server, how fast a change
// reaches every replica, and what a client sees when one replica dies behind the shipped nginx configuration.
//
//   swift build -c release --product presence
//   swift run -c release --package-path Benchmarks ReplicaLoad [members 2000] [changers 200] [changes/s 100] [phase s 20]
//
// Half the members are online (sessions from this process). Then, for 0, 1, 2 and 3 replicas (release `presence
// serve`, each its own process with its own `--xmpp-resource` on the same watcher):
//  - login: the server's CPU from a replica's start until its `/readyz` says 200 (roster, snapshot, probes);
//  - routing: `changers` online members change their status at `changes/s` for `phase s`; the server's CPU per
//    change with that many replicas online: the slope is what one more replica costs per change;
//  - convergence (3 replicas): each change's status carries the monotonic time it was sent; a change stream on every
//    replica times its arrival there; the convergence time is the last replica's arrival.
// Then failover: nginx with `Samples/deploy/nginx-replicas.conf` before the three, 20 querying clients and 3 change
// streams through it while changes go on; replica 2 is killed with SIGKILL. Reported: failed requests, latency
// around the kill, the attempts nginx still made at the dead replica (from its access log), and each stream's gap.
import Foundation
import LoadSupport
import PresenceModel
import Synchronization
import XMPPClient
import XMPPStream

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
func argument(_ index: Int, _ fallback: Int) -> Int { index < arguments.count ? arguments[index] : fallback }
let memberCount = argument(0, 2_000)
let changerCount = argument(1, 200)
let changeRate = argument(2, 100)
let phaseSeconds = argument(3, 20)
let onlineCount = max(changerCount, memberCount / 2)
let replicaCount = 3
let clientCount = 20

func percentile(_ sorted: [Double], _ q: Double) -> Double {
    sorted.isEmpty ? 0 : sorted[min(Int(Double(sorted.count) * q), sorted.count - 1)]
}

func milliseconds(_ nanoseconds: UInt64) -> Double { Double(nanoseconds) / 1e6 }

// MARK: Prosody and its online members

let prosody = try LoadProsody(members: memberCount)
let memberJIDs = (0 ..< memberCount).map { "\(LoadProsody.member($0))@\(prosody.domain)" }
let changerJIDs = Array(memberJIDs.prefix(changerCount))
report(
    "Prosody (pid \(prosody.processIdentifier)) with \(memberCount) members; \(onlineCount) online, \(changerCount) of them changing"
)

let secrets = FileManager.default.temporaryDirectory.appendingPathComponent("replica-load-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: secrets, withIntermediateDirectories: true)
let passwordFile = secrets.appendingPathComponent("watcher.password")
FileManager.default.createFile(
    atPath: passwordFile.path, contents: Data(LoadProsody.password.utf8), attributes: [.posixPermissions: 0o600])

let loggedIn = Atomic<Int>(0)
let memberErrors = Atomic<Int>(0)
let endGate = Gate()
/// What each changing member is to send next, in order.
let changeFeeds = (0 ..< changerCount).map { _ in AsyncStream<String>.makeStream() }

/// One online member: logs in, says it is online, then sends what its feed gives it (a changing member) or
/// waits for the end.
func runMember(_ index: Int) async {
    let configuration = XMPPClientConfiguration(
        account: try! BareJID(memberJIDs[index]), password: LoadProsody.password, resource: "load",
        host: "127.0.0.1", port: prosody.port, tls: .off, keepAlive: nil)
    do {
        try await XMPPConnection.withSession(configuration) { session in
            var writer = XMPPWriter()
            writer.presence(status: "online", priority: 1)
            try await session.send(writer.bytes)
            loggedIn.add(1, ordering: .relaxed)
            if index < changerCount {
                for await status in changeFeeds[index].stream {
                    var change = XMPPWriter()
                    change.presence(show: status.hasSuffix("0") ? "away" : nil, status: status, priority: 1)
                    try await session.send(change.bytes)
                }
            } else {
                await endGate.wait()
            }
        }
    } catch {
        if memberErrors.add(1, ordering: .relaxed).newValue <= 3 { report("member \(index): \(error)") }
    }
}

for batchStart in stride(from: 0, to: onlineCount, by: 50) {
    for index in batchStart ..< min(batchStart + 50, onlineCount) {
        Task { await runMember(index) }
    }
    let target = min(batchStart + 50, onlineCount)
    while loggedIn.load(ordering: .relaxed) + memberErrors.load(ordering: .relaxed) < target {
        try await Task.sleep(for: .milliseconds(10))
    }
}
guard memberErrors.load(ordering: .relaxed) == 0 else {
    report("\(memberErrors.load(ordering: .relaxed)) members could not log in")
    exit(1)
}
report("\(loggedIn.load(ordering: .relaxed)) members online")

// MARK: Changes, timed by what they carry

/// Sends `changeRate` changes per second, round robin over the changing members, each status `t=<ns> #<n>`;
/// returns each change sent: its time (the `t` value) and the member who sent it, in order.
let sequence = Atomic<Int>(0)
func sendChanges(for seconds: Int) async throws -> [(time: UInt64, member: Int)] {
    var sent: [(time: UInt64, member: Int)] = []
    let perTick = max(1, changeRate / 100)
    var next = ContinuousClock.now
    let end = next + .seconds(seconds)
    while ContinuousClock.now < end {
        for _ in 0 ..< perTick {
            let number = sequence.add(1, ordering: .relaxed).newValue
            let time = monotonicNanoseconds()
            changeFeeds[number % changerCount].continuation.yield("t=\(time) #\(number)")
            sent.append((time, number % changerCount))
        }
        next += .milliseconds(10)
        try await Task.sleep(until: next)
    }
    return sent
}

/// The `t=` time in an event's data, or nil for a status that is not a timed change.
@Sendable func changeTime(in data: String) -> UInt64? {
    guard let range = data.range(of: "\"status\":\"t=") else { return nil }
    return UInt64(data[range.upperBound...].prefix { $0.isNumber })
}

@Sendable func jid(in data: String) -> String? {
    guard let range = data.range(of: "\"jid\":\"") else { return nil }
    return String(data[range.upperBound...].prefix { $0 != "\"" })
}

let eventsPath = "/v1/presence/events?" + changerJIDs.map { "jid=\($0)" }.joined(separator: "&")

/// Arrival (monotonic ns) of each timed change at each replica, by the change's time.
let arrivals = Mutex<[UInt64: [UInt64]]>([:])
let closing = Atomic<Bool>(false)

/// Reads one replica's change stream on a thread of its own, recording when each timed change arrives; returns
/// once the stream is open.
let streamsOpen = Atomic<Int>(0)
func readArrivals(replica: Int, port: Int) async {
    let opened = streamsOpen.load(ordering: .relaxed)
    Task.detached {
        guard let (status, events) = try? await LoadHTTP.events(port: port, path: eventsPath), status == 200 else {
            report("replica \(replica + 1): its change stream did not open")
            exit(1)
        }
        streamsOpen.add(1, ordering: .relaxed)
        var reader = events.makeAsyncIterator()
        while !closing.load(ordering: .relaxed) {
            guard let event = try? await reader.next() else { break }
            let now = monotonicNanoseconds()
            guard event.name == "presence", let time = changeTime(in: event.data) else { continue }
            arrivals.withLock { arrivals in
                var times = arrivals[time] ?? [UInt64](repeating: 0, count: replicaCount)
                if times[replica] == 0 { times[replica] = now }
                arrivals[time] = times
            }
        }
    }
    while streamsOpen.load(ordering: .relaxed) == opened { try? await Task.sleep(for: .milliseconds(10)) }
}

// MARK: Replicas, one at a time

func get(_ path: String, port: Int) -> Int {
    (try? LoadHTTP.get(port: port, path: path))?.status ?? 0
}

var replicas: [ServiceProcess] = []
var loginLines: [String] = []
var routingLines: [String] = []
var routingCPU: [Double] = []
var convergenceSent: [UInt64] = []
var lastSent: [String: UInt64] = [:]

for count in 0 ... replicaCount {
    if count > 0 {
        let before = prosody.cpuSeconds()
        let start = ContinuousClock.now
        let replica = try ServiceProcess(arguments: [
            "--storage", "dictionary", "--xmpp-jid", "watcher@\(prosody.domain)", "--xmpp-password-file",
            passwordFile.path, "--xmpp-host", "127.0.0.1", "--xmpp-port", String(prosody.port), "--xmpp-tls", "off",
            "--xmpp-resource", "replica-\(count)", "--when-not-ready", "refuse",
        ])
        while get("/readyz", port: replica.httpPort) != 200 {
            guard replica.isRunning, ContinuousClock.now - start < .seconds(300) else {
                report("replica \(count) did not become ready:\n\(replica.recentLog)")
                exit(1)
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let ready = seconds(ContinuousClock.now - start)
        // Let the server finish what the login set off (the watcher's presence to every member) before measuring.
        try await Task.sleep(for: .seconds(2))
        let loginCPU = prosody.cpuSeconds() - before
        replicas.append(replica)
        await readArrivals(replica: count - 1, port: replica.httpPort)
        loginLines.append(
            String(
                format: "replica %d: ready in %.2f s; Prosody CPU %.2f s for its login and snapshot; replica CPU %.2f s",
                count, ready, loginCPU, replica.cpuSeconds()))
        report(loginLines.last!)
    }
    try await Task.sleep(for: .seconds(1))
    let before = prosody.cpuSeconds()
    let sent = try await sendChanges(for: phaseSeconds)
    for change in sent { lastSent[changerJIDs[change.member]] = change.time }
    try await Task.sleep(for: .seconds(1))
    let cpu = prosody.cpuSeconds() - before
    routingCPU.append(cpu / Double(sent.count))
    routingLines.append(
        String(
            format: "%d replica(s) online: %d changes; Prosody CPU %.2f s, %.1f µs per change", count, sent.count, cpu,
            cpu / Double(sent.count) * 1e6))
    report(routingLines.last!)
    if count == replicaCount { convergenceSent = sent.map(\.time) }
}

// MARK: Convergence across the three

try await Task.sleep(for: .seconds(2))
let recorded = arrivals.withLock { $0 }
var convergence: [Double] = []
var perReplica = [[Double]](repeating: [], count: replicaCount)
var incomplete = 0
for time in convergenceSent {
    guard let times = recorded[time], !times.contains(0) else {
        incomplete += 1
        continue
    }
    convergence.append(milliseconds(times.max()! - time))
    for replica in 0 ..< replicaCount { perReplica[replica].append(milliseconds(times[replica] - time)) }
}
convergence.sort()
report("")
report("## Convergence: \(convergenceSent.count) changes at \(changeRate)/s, \(replicaCount) replicas")
report(
    String(
        format: "until every replica shows it: p50 %.2f ms, p99 %.2f ms, max %.2f ms; %d changes missing on some replica",
        percentile(convergence, 0.5), percentile(convergence, 0.99), convergence.last ?? 0, incomplete))
for replica in 0 ..< replicaCount {
    let sorted = perReplica[replica].sorted()
    report(
        String(
            format: "  replica %d: p50 %.2f ms, p99 %.2f ms", replica + 1, percentile(sorted, 0.5),
            percentile(sorted, 0.99)))
}

// MARK: Failover behind nginx

let nginx = try LoadNginx(replicaPorts: replicas.map(\.httpPort))
report("")
report("## Failover: nginx (port \(nginx.port)) before \(replicaCount) replicas, \(clientCount) clients, 3 streams")

struct Request: Sendable {
    let endedAt: Double
    let milliseconds: Double
    let status: Int
}
let requests = Mutex<[Request]>([])
let querying = Atomic<Bool>(true)
let reconnects = Atomic<Int>(0)
for client in 0 ..< clientCount {
    Thread.detachNewThread {
        var connection = try? KeepAliveClient(port: nginx.port)
        var index = client
        while querying.load(ordering: .relaxed) {
            index = (index + 7) % changerJIDs.count
            let path = "/v1/presence/\(changerJIDs[index])"
            let start = monotonicNanoseconds()
            var response = connection?.get(path)
            if response == nil {
                // nginx closes a keep-alive connection after its 1,000th request: connect again, as a browser does.
                reconnects.add(1, ordering: .relaxed)
                connection = try? KeepAliveClient(port: nginx.port)
                response = connection?.get(path)
            }
            let request = Request(
                endedAt: Date().timeIntervalSince1970, milliseconds: milliseconds(monotonicNanoseconds() - start),
                status: response?.status ?? 0)
            requests.withLock { $0.append(request) }
            Thread.sleep(forTimeInterval: 0.005)
        }
    }
}

/// A change stream through nginx as a browser's EventSource keeps it: on a break it reconnects with the last id.
/// Records when each break happened and when the next event arrived, and every status regression.
struct StreamGap: Sendable {
    let stream: Int
    let brokeAt: UInt64
    let resumedAt: UInt64
}
let gaps = Mutex<[StreamGap]>([])
let regressions = Atomic<Int>(0)
let lastSeen = Mutex<[[String: UInt64]]>(Array(repeating: [:], count: 3))
for stream in 0 ..< 3 {
    Task.detached {
        var lastID: String?
        var brokeAt: UInt64?
        while !closing.load(ordering: .relaxed) {
            guard let (status, events) = try? await LoadHTTP.events(port: nginx.port, path: eventsPath, lastEventID: lastID),
                status == 200
            else {
                try? await Task.sleep(for: .milliseconds(50))
                continue
            }
            var reader = events.makeAsyncIterator()
            while let event = try? await reader.next() {
                if let broke = brokeAt {
                    gaps.withLock { $0.append(StreamGap(stream: stream, brokeAt: broke, resumedAt: monotonicNanoseconds())) }
                    brokeAt = nil
                }
                lastID = event.id ?? lastID
                guard event.name == "presence", let jid = jid(in: event.data) else { continue }
                let time = changeTime(in: event.data) ?? 0
                lastSeen.withLock { seen in
                    if time < seen[stream][jid, default: 0] { regressions.add(1, ordering: .relaxed) }
                    seen[stream][jid] = max(time, seen[stream][jid, default: 0])
                }
            }
            if !closing.load(ordering: .relaxed) { brokeAt = monotonicNanoseconds() }
        }
    }
}

let changes = Task { try await sendChanges(for: 15) }
try await Task.sleep(for: .seconds(5))
let killedPort = replicas[1].httpPort
let killedAt = Date().timeIntervalSince1970
let killedMonotonic = monotonicNanoseconds()
kill(replicas[1].processIdentifier, SIGKILL)
report("killed replica 2 (port \(killedPort))")
let failoverSent = try await changes.value
querying.store(false, ordering: .relaxed)
try await Task.sleep(for: .seconds(2))

let answered = requests.withLock { $0 }
let failed = answered.filter { $0.status != 200 }
func latencies(_ range: ClosedRange<Double>) -> [Double] {
    answered.filter { range.contains($0.endedAt - killedAt) }.map(\.milliseconds).sorted()
}
let before = latencies(-5 ... 0)
let after = latencies(0 ... 3)
report(
    "requests: \(answered.count), failed: \(failed.count) (statuses \(Set(failed.map(\.status)).sorted())), reconnects to nginx: \(reconnects.load(ordering: .relaxed))"
)
report(
    String(
        format: "latency 5 s before the kill: p50 %.2f ms, p99 %.2f ms; 3 s after: p50 %.2f ms, p99 %.2f ms, max %.2f ms",
        percentile(before, 0.5), percentile(before, 0.99), percentile(after, 0.5), percentile(after, 0.99),
        after.last ?? 0))
let attempts = nginx.accessLog().filter { $0.endedAt >= killedAt && $0.replicaPorts.contains(killedPort) }
report(
    "attempts nginx made at the dead replica after the kill: \(attempts.count), at "
        + attempts.map { String(format: "+%.0f ms", ($0.endedAt - killedAt) * 1000) }.joined(separator: ", ")
        + "; their final statuses: \(Set(attempts.map(\.status)).sorted())")
for gap in gaps.withLock({ $0 }) {
    report(
        String(
            format: "stream %d broke %.0f ms after the kill and was answered again %.0f ms later (reconnecting at once)",
            gap.stream + 1, milliseconds(gap.brokeAt - killedMonotonic), milliseconds(gap.resumedAt - gap.brokeAt)))
}
// Every stream ends on every changing member's last change: nothing missed, on whichever replica it ended.
for change in failoverSent { lastSent[changerJIDs[change.member]] = change.time }
let seen = lastSeen.withLock { $0 }
let missed = (0 ..< 3).map { stream in changerJIDs.filter { seen[stream][$0] != lastSent[$0] }.count }
report(
    "status regressions on the streams: \(regressions.load(ordering: .relaxed)); members whose last change a stream missed: \(missed)"
)

closing.store(true, ordering: .relaxed)
for feed in changeFeeds { feed.continuation.finish() }
endGate.open()
nginx.stop()
for replica in replicas where replica.isRunning { replica.stop() }
prosody.stop()
try? FileManager.default.removeItem(at: secrets)
report("")
report("## The XMPP server's cost per replica")
for line in loginLines { report(line) }
for line in routingLines { report(line) }
if routingCPU.count > 1 {
    let perReplica = (routingCPU.last! - routingCPU.first!) / Double(routingCPU.count - 1)
    report(String(format: "one more replica: %.1f µs of Prosody CPU per change", perReplica * 1e6))
}
