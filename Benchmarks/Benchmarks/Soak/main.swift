// The soak: `presence serve` (the release binary, in its own process, dictionary storage) with its XMPP source on
// a real Prosody, for a long run with everything at once:
//  - F feeders, each one long-lived feed connection speaking for 2,000 people of its own at R stanzas/s;
//  - C clients on keep-alive connections asking Q requests/s each (one JID; every tenth a batch of 50);
//  - S change streams, each watching 50 people from both sources, read throughout;
//  - M Prosody members who change their status every few seconds, log off, and log on again later.
// Every 10 s one line: the service's resident memory and CPU, requests, their p99 and failures, events. At the end:
// the slope of the resident memory after warm-up, every failure (an answer other than 200, a request or stream
// that breaks), and every person's answer, from the query API and from each change stream, against the truth
// (what each feeder and member last sent). Exits 1 on any failure or difference.
//
//   swift build -c release --product presence
//   swift run -c release --package-path Benchmarks Soak [seconds 600] [feeders 8] [clients 50] [streams 20] [members 200]
import Foundation
import LoadSupport
import PresenceModel
import PresenceWire
import PresenceWorkload
import Synchronization
import XMPPClient
import XMPPStream

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
func argument(_ index: Int, _ fallback: Int) -> Int { index < arguments.count ? arguments[index] : fallback }
let duration = argument(0, 600)
let feederCount = argument(1, 8)
let clientCount = argument(2, 50)
let streamCount = argument(3, 20)
let memberCount = argument(4, 200)
let peoplePerFeeder = 2_000
let stanzasPerSecondPerFeeder = 1_000
let requestsPerSecondPerClient = 40
let warmUp = max(60, duration / 5)
let sampleInterval = 10

// MARK: Prosody and the service

let prosody = try LoadProsody(members: memberCount)
let memberJIDs = (0 ..< memberCount).map { "\(LoadProsody.member($0))@\(prosody.domain)" }
truth.withLock { truth in for jid in memberJIDs { truth[jid] = .offline } }
let secrets = FileManager.default.temporaryDirectory.appendingPathComponent("soak-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: secrets, withIntermediateDirectories: true)
let passwordFile = secrets.appendingPathComponent("watcher.password")
FileManager.default.createFile(
    atPath: passwordFile.path, contents: Data(LoadProsody.password.utf8), attributes: [.posixPermissions: 0o600])
let service = try ServiceProcess(arguments: [
    "--storage", "dictionary", "--xmpp-jid", "watcher@\(prosody.domain)", "--xmpp-password-file", passwordFile.path,
    "--xmpp-host", "127.0.0.1", "--xmpp-port", String(prosody.port), "--xmpp-tls", "off",
])
report("presence serve (pid \(service.processIdentifier)) on feed \(service.feedPort), http \(service.httpPort)")

func stats() -> ServiceStats? {
    guard let response = try? LoadHTTP.get(port: service.httpPort, path: "/v1/stats")
    else { return nil }
    return try? JSONDecoder().decode(ServiceStats.self, from: Data(response.body))
}
let liveBy = ContinuousClock.now + .seconds(60)
while stats()?.source?.live != true {
    guard ContinuousClock.now < liveBy, service.isRunning else {
        report("the XMPP source did not become live within 60 s:\n\(service.recentLog)")
        service.stop()
        prosody.stop()
        exit(1)
    }
    try await Task.sleep(for: .milliseconds(100))
}
report("the XMPP source is live: roster \(stats()?.source?.rosterSize ?? 0)")

// MARK: Members on Prosody

let endGate = Gate()

func runMember(_ index: Int) async {
    let jid = memberJIDs[index]
    var random = SplitMix64(seed: UInt64(10_000 + index))
    let configuration = XMPPClientConfiguration(
        account: try! BareJID(jid), password: LoadProsody.password, resource: "soak", host: "127.0.0.1",
        port: prosody.port, tls: .off, keepAlive: nil)
    var round = 0
    while running.load(ordering: .relaxed) {
        do {
            try await XMPPConnection.withSession(configuration) { session in
                memberLogins.add(1, ordering: .relaxed)
                for _ in 0 ..< 3 + random.below(12) {
                    guard running.load(ordering: .relaxed) else { break }
                    round += 1
                    let expected = Expected(
                        available: true, show: shows[random.below(shows.count)], status: "\(jid) #\(round)")
                    var writer = XMPPWriter()
                    writer.presence(show: expected.show, status: expected.status, priority: 1)
                    truth.withLock { $0[jid] = expected }
                    try await session.send(writer.bytes)
                    memberChanges.add(1, ordering: .relaxed)
                    try await Task.sleep(for: .milliseconds(500 + random.below(3_000)))
                }
                // Still online at the end: stay, so that the last status stands while it is checked.
                if !running.load(ordering: .relaxed) { await endGate.wait() }
                // Logging off: the server tells the watcher this member is unavailable.
                truth.withLock { $0[jid] = .offline }
            }
        } catch {
            // The end of the run cancels the members still waiting: that is no session error.
            if !running.load(ordering: .relaxed) { break }
            memberErrors.add(1, ordering: .relaxed)
            truth.withLock { $0[jid] = .offline }
            if memberErrors.load(ordering: .relaxed) <= 3 { report("member \(jid): \(error)") }
        }
        try? await Task.sleep(for: .milliseconds(1_000 + random.below(9_000)))
    }
}

// MARK: Feeders

let feedJIDs = (0 ..< feederCount).map { feeder in
    (0 ..< peoplePerFeeder).map { "p\($0)-f\(feeder)@feed.example" }
}
let allJIDs = memberJIDs + feedJIDs.flatMap { $0 }
let feedersRunning = Atomic<Int>(0)

func runFeeder(_ feeder: Int) {
    let people = feedJIDs[feeder]
    var last = [Expected?](repeating: nil, count: people.count)
    var random = SplitMix64(seed: UInt64(feeder + 1))
    var sequence = 0
    defer {
        truth.withLock { truth in
            for (index, expected) in last.enumerated() { if let expected { truth[people[index]] = expected } }
        }
        feedersRunning.subtract(1, ordering: .relaxed)
    }
    let descriptor: Int32
    do { descriptor = try LoopbackTCP.connect(port: service.feedPort) } catch {
        fail("feeder \(feeder) could not connect: \(error)")
        return
    }
    defer { close(descriptor) }
    let perTick = stanzasPerSecondPerFeeder / 10
    var next = ContinuousClock.now
    while running.load(ordering: .relaxed) {
        var writer = XMPPWriter()
        for _ in 0 ..< perTick {
            let index = random.below(people.count)
            sequence += 1
            let expected: Expected
            if random.below(8) == 0 {
                expected = .offline
                writer.presence(type: "unavailable", from: people[index] + "/desk", status: "gone #\(sequence)")
            } else {
                expected = Expected(
                    available: true, show: shows[random.below(shows.count)], status: "f\(feeder) #\(sequence)")
                writer.presence(from: people[index] + "/desk", show: expected.show, status: expected.status)
            }
            last[index] = expected
        }
        do { try writer.bytes.withUnsafeBytes { try LoopbackTCP.sendAll(descriptor, $0) } } catch {
            // What it sent before may or may not have arrived: the final check will say.
            fail("feeder \(feeder): \(error)")
            return
        }
        stanzasSent.add(perTick, ordering: .relaxed)
        next += .milliseconds(100)
        let now = ContinuousClock.now
        if next > now { Thread.sleep(forTimeInterval: seconds(next - now)) } else { next = now }
    }
}

// MARK: Query clients

/// Each client's latencies in milliseconds, with the second of the run each request ended in.
let latencies = Mutex<[(second: Int, milliseconds: Double)]>([])
let clientsRunning = Atomic<Int>(0)
let start = ContinuousClock.now

func runClient(_ client: Int) {
    defer { clientsRunning.subtract(1, ordering: .relaxed) }
    var random = SplitMix64(seed: UInt64(20_000 + client))
    var connection = try? KeepAliveClient(port: service.httpPort)
    var local: [(second: Int, milliseconds: Double)] = []
    local.reserveCapacity(duration * requestsPerSecondPerClient + 100)
    var next = ContinuousClock.now
    while running.load(ordering: .relaxed) {
        let path: String
        if random.below(10) == 0 {
            path =
                "/v1/presence?"
                + (0 ..< 50).map { _ in "jid=" + allJIDs[random.below(allJIDs.count)] }
                .joined(separator: "&")
        } else {
            path = "/v1/presence/" + allJIDs[random.below(allJIDs.count)]
        }
        let began = ContinuousClock.now
        let response = connection?.get(path)
        let ended = ContinuousClock.now
        if let response, response.status == 200 {
            local.append((Int(seconds(ended - start)), seconds(ended - began) * 1000))
            requestsDone.add(1, ordering: .relaxed)
        } else {
            fail(
                "client \(client): \(response.map { "status \($0.status)" } ?? "the connection failed") for \(path.prefix(80))"
            )
            connection = try? KeepAliveClient(port: service.httpPort)
        }
        next += .nanoseconds(1_000_000_000 / requestsPerSecondPerClient)
        let now = ContinuousClock.now
        if next > now { Thread.sleep(forTimeInterval: seconds(next - now)) } else { next = now }
    }
    latencies.withLock { $0 += local }
}

// MARK: Change streams

/// What each change stream last said about each person it watches.
final class StreamView: Sendable {
    let answers = Mutex<[String: PresenceQueryResult]>([:])
}
let streamViews = (0 ..< streamCount).map { _ in StreamView() }

func runStream(_ stream: Int) async {
    var random = SplitMix64(seed: UInt64(30_000 + stream))
    // Half members, half fed people: both sources' changes reach screens.
    let watched = Set(
        (0 ..< 25).map { _ in memberJIDs[random.below(memberJIDs.count)] }
            + (0 ..< 25).map { _ in allJIDs[memberJIDs.count + random.below(allJIDs.count - memberJIDs.count)] })
    let path = "/v1/presence/events?" + watched.map { "jid=" + $0 }.joined(separator: "&")
    let decoder = JSONDecoder()
    do {
        let (status, events) = try await LoadHTTP.events(port: service.httpPort, path: path)
        guard status == 200 else {
            fail("stream \(stream): status \(status)")
            return
        }
        for try await event in events {
            guard event.name == "presence",
                let answer = try? decoder.decode(PresenceQueryResult.self, from: Data(event.data.utf8))
            else { continue }
            streamViews[stream].answers.withLock { $0[answer.jid] = answer }
            eventsReceived.add(1, ordering: .relaxed)
        }
        if !closing.load(ordering: .relaxed) { fail("stream \(stream) ended") }
    } catch {
        if !closing.load(ordering: .relaxed) { fail("stream \(stream): \(error)") }
    }
}

// MARK: The run

let memberTask = Task {
    await withTaskGroup(of: Void.self) { group in
        for index in 0 ..< memberCount {
            group.addTask { await runMember(index) }
            if index % 32 == 31 { try? await Task.sleep(for: .milliseconds(200)) }
        }
    }
}
for feeder in 0 ..< feederCount {
    feedersRunning.add(1, ordering: .relaxed)
    Thread.detachNewThread { runFeeder(feeder) }
}
for stream in 0 ..< streamCount { Task.detached { await runStream(stream) } }
for client in 0 ..< clientCount {
    clientsRunning.add(1, ordering: .relaxed)
    Thread.detachNewThread { runClient(client) }
}

report(
    "\(duration) s: \(feederCount) feeders × \(stanzasPerSecondPerFeeder) stanzas/s, \(clientCount) clients × "
        + "\(requestsPerSecondPerClient) requests/s, \(streamCount) change streams, \(memberCount) Prosody members")
report(
    "    time  service RSS  service CPU  Prosody RSS  stanzas sent  requests  failures  events  member changes  logins")
var samples: [(seconds: Double, resident: Int)] = []
var lastCPU = service.cpuSeconds()
for tick in 1 ... duration / sampleInterval {
    try await Task.sleep(until: start + .seconds(tick * sampleInterval))
    let resident = service.residentBytes()
    let cpu = service.cpuSeconds()
    samples.append((seconds(ContinuousClock.now - start), resident))
    report(
        String(
            format: "%6d s  %8.1f MiB  %10.0f%%  %7.1f MiB  %12d  %8d  %8d  %6d  %14d  %6d", tick * sampleInterval,
            Double(resident) / 1_048_576, (cpu - lastCPU) / Double(sampleInterval) * 100,
            Double(processResidentBytes(prosody.processIdentifier)) / 1_048_576, stanzasSent.load(ordering: .relaxed),
            requestsDone.load(ordering: .relaxed), failures.load(ordering: .relaxed),
            eventsReceived.load(ordering: .relaxed), memberChanges.load(ordering: .relaxed),
            memberLogins.load(ordering: .relaxed)))
    lastCPU = cpu
    if !service.isRunning {
        fail("the service exited")
        break
    }
}

// MARK: The end: everything stops changing, then every answer is checked against the truth

running.store(false, ordering: .relaxed)
while feedersRunning.load(ordering: .relaxed) + clientsRunning.load(ordering: .relaxed) > 0 {
    try await Task.sleep(for: .milliseconds(10))
}
// Members still in a session stay online; the others are offline. Give their last sends a moment to be written.
try await Task.sleep(for: .seconds(2))
let expected = truth.withLock { $0 }

/// The people whose answer differs from the truth, with what was answered.
func differences() -> [(jid: String, answer: PresenceQueryResult?)] {
    var differing: [(String, PresenceQueryResult?)] = []
    var index = 0
    while index < allJIDs.count {
        let batch = allJIDs[index ..< min(index + 1000, allJIDs.count)]
        index += batch.count
        let path = "/v1/presence?" + batch.map { "jid=" + $0 }.joined(separator: "&")
        guard let response = try? LoadHTTP.get(port: service.httpPort, path: path),
            response.status == 200,
            let document = try? JSONDecoder().decode(QueryDocument.self, from: Data(response.body))
        else { return batch.map { ($0, nil) } }
        for (jid, answer) in zip(batch, document.results) where expected[jid]?.matches(answer) == false {
            differing.append((jid, answer))
        }
    }
    return differing
}

let checkStart = ContinuousClock.now
var differing = differences()
while !differing.isEmpty, ContinuousClock.now - checkStart < .seconds(60) {
    try await Task.sleep(for: .milliseconds(200))
    differing = differences()
}
report(
    "final answers: \(allJIDs.count - differing.count) of \(allJIDs.count) people equal to the truth"
        + (differing.isEmpty ? " (within \(checkStart.duration(to: .now)) of the last change)" : ""))
for (jid, answer) in differing.prefix(5) {
    report(
        "  \(jid): expected \(expected[jid].map { "\($0)" } ?? "?"), answered \(answer.map { "\($0)" } ?? "nothing")")
}

/// Change streams whose last word about someone differs from the truth.
func staleStreamViews() -> Int {
    streamViews.reduce(0) { count, view in
        count
            + view.answers.withLock { answers in answers.filter { expected[$0.key]?.matches($0.value) == false }.count }
    }
}
var stale = staleStreamViews()
while stale > 0, ContinuousClock.now - checkStart < .seconds(60) {
    try await Task.sleep(for: .milliseconds(200))
    stale = staleStreamViews()
}
let watchedTotal = streamViews.reduce(0) { $0 + $1.answers.withLock { $0.count } }
report("change streams: \(watchedTotal - stale) of \(watchedTotal) watched answers equal to the truth")

let final = stats()
closing.store(true, ordering: .relaxed)
endGate.open()
memberTask.cancel()
let exitStatus = service.stop()
prosody.stop()
try? FileManager.default.removeItem(at: secrets)

// MARK: Report

let after = samples.filter { $0.seconds >= Double(warmUp) }
func slope(_ points: [(seconds: Double, resident: Int)]) -> Double {
    guard points.count >= 2 else { return 0 }
    let meanX = points.reduce(0) { $0 + $1.seconds } / Double(points.count)
    let meanY = points.reduce(0) { $0 + Double($1.resident) } / Double(points.count)
    let covariance = points.reduce(0) { $0 + ($1.seconds - meanX) * (Double($1.resident) - meanY) }
    let variance = points.reduce(0) { $0 + ($1.seconds - meanX) * ($1.seconds - meanX) }
    return variance == 0 ? 0 : covariance / variance
}
let bytesPerSecond = slope(after)
if let first = after.first, let last = after.last {
    report(
        String(
            format:
                "resident memory after the %d s warm-up: %.1f → %.1f MiB (min %.1f, max %.1f); slope %+.3f MiB/min (%+.1f MiB/h) over %d samples",
            warmUp, Double(first.resident) / 1_048_576, Double(last.resident) / 1_048_576,
            Double(after.map(\.resident).min()!) / 1_048_576, Double(after.map(\.resident).max()!) / 1_048_576,
            bytesPerSecond * 60 / 1_048_576, bytesPerSecond * 3600 / 1_048_576, after.count))
}
let all = latencies.withLock { $0 }.map(\.milliseconds).sorted()
func percentile(_ p: Double) -> Double { all.isEmpty ? 0 : all[min(Int(Double(all.count) * p), all.count - 1)] }
report(
    String(
        format: "requests: %d answered 200, p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, max %.1f ms", all.count,
        percentile(0.5), percentile(0.99), percentile(0.999), all.last ?? 0))
if let final {
    report(
        "service: \(final.stanzasRead) stanzas read, \(final.updatesApplied) updates applied, "
            + "\(final.streamErrors) stream errors, \(final.eventStreamsClosedAsStalled) streams closed as stalled; "
            + "XMPP source: \(final.source?.presencesReceived ?? 0) presences, \(final.source?.reconnects ?? 0) reconnects"
    )
}
report(
    "members: \(memberLogins.load(ordering: .relaxed)) logins, \(memberChanges.load(ordering: .relaxed)) changes, "
        + "\(memberErrors.load(ordering: .relaxed)) session errors; service exit status \(exitStatus)")
report("failed requests and streams: \(failures.load(ordering: .relaxed))")
for note in failureNotes.withLock({ $0 }) { report("  \(note)") }
let passed = failures.load(ordering: .relaxed) == 0 && differing.isEmpty && stale == 0 && exitStatus == 0
report(passed ? "PASS" : "FAIL")
exit(passed ? 0 : 1)
