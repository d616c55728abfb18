// The disk tier under load, release build:
//
//   swift run -c release --package-path Benchmarks DiskTierLoad ingest     # 1M updates, 100k users: with and without
//   swift run -c release --package-path Benchmarks DiskTierLoad latency    # lookup latency by the tier that answers
//   swift run -c release --package-path Benchmarks DiskTierLoad http       # the same over HTTP
//   swift run -c release --package-path Benchmarks DiskTierLoad restart    # restore of 1M users: library and process
//   swift run -c release --package-path Benchmarks DiskTierLoad kill9 100  # kill -9 during ingest, N times
//
// `restart` and `kill9` run the release `presence` binary (swift build -c release --product presence).
import Foundation
import LoadSupport
import PresenceDisk
import PresenceStore
import PresenceWorkload
import Synchronization

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func time(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    return seconds(ContinuousClock.now - start)
}

func scratch() -> String { NSTemporaryDirectory() + "presence-disk-bench-\(UUID().uuidString)" }

func removeDirectory(_ path: String) { try? FileManager.default.removeItem(atPath: path) }

/// `count` updates over `users` people of a generated directory: each an available or unavailable presence of
/// one of the person's devices, with a show and a status, as the workload generator makes them.
func updates(users: Int, count: Int, seed: UInt64 = 3) -> [PresenceUpdate] {
    var random = SplitMix64(seed: seed)
    let directory = Directory(users: users, maxResources: 3, random: &random)
    let shows: [PresenceShow?] = [nil, .away, .dnd, .xa, .chat]
    var result: [PresenceUpdate] = []
    result.reserveCapacity(count)
    for index in 0 ..< count {
        let person = directory.people[index < users ? index : random.below(users)]
        let device = person.devices[random.below(person.devices.count)]
        let from = try! JID(person.jid + "/" + device.resource)
        if index >= users && random.below(5) == 0 {
            result.append(PresenceUpdate(from: from, availability: .unavailable))
        } else {
            result.append(
                PresenceUpdate(
                    from: from, availability: .available,
                    details: PresenceDetails(
                        show: shows[random.below(shows.count)], status: "status \(random.below(50))",
                        priority: Int8(device.priority))))
        }
    }
    return result
}

/// What the flusher reported, summed.
final class FlushTotals: Sendable {
    private let totals = Mutex((users: 0, duration: Duration.zero, flushes: 0))
    func add(_ outcome: FlushOutcome) {
        totals.withLock {
            $0.users += outcome.users
            $0.duration += outcome.duration
            $0.flushes += 1
        }
    }
    var summary: (users: Int, seconds: Double, flushes: Int) {
        totals.withLock { ($0.users, seconds($0.duration), $0.flushes) }
    }
}

func tier(_ memory: (any MemoryStorage)?, _ directory: String, totals: FlushTotals? = nil) throws -> TieredStorage {
    let interval = Int(ProcessInfo.processInfo.environment["FLUSH_MS"] ?? "1000")!
    return try TieredStorage(
        memory: memory, disk: SQLitePresenceStore(directory: directory),
        configuration: .init(flushInterval: .milliseconds(interval), flushDirtyThreshold: interval > 10_000 ? Int.max : 50_000),
        onFlush: { totals?.add($0) })
}

func fileBytes(_ directory: String) -> Int {
    let path = directory + "/" + SQLitePresenceStore.fileName
    return ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int) ?? 0
}

// MARK: Ingest

func ingest() throws {
    let users = 100_000
    let stream = updates(users: users, count: 1_000_000)
    print("ingest: \(stream.count) updates over \(users) users, one thread, best of 3 (release)")
    let receivedAt = PresenceTime.now()
    func apply(into storage: any MemoryStorage) -> Double {
        time { for update in stream { storage.apply(update, receivedAt: receivedAt) } }
    }
    // OBSERVED=1: a change observer on both sides, as when the service has change streams open.
    let observed = ProcessInfo.processInfo.environment["OBSERVED"] == "1"
    if observed { print("with a change observer installed") }
    func observing(_ storage: any MemoryStorage) -> any MemoryStorage {
        if observed { storage.setChangeObserver { _ in } }
        return storage
    }
    for (name, makeMemory) in [
        ("dictionary", { DictionaryMemoryStorage() as any MemoryStorage }),
        ("lru 10k", { LRUMemoryStorage(countLimit: 10_000) as any MemoryStorage }),
    ] {
        var memoryOnly: [Double] = []
        var withDisk: [Double] = []
        var lastTotals: (users: Int, seconds: Double, flushes: Int) = (0, 0, 0)
        var bytesPerUser = 0.0
        var finalFlush = 0.0
        for _ in 0 ..< 3 {
            memoryOnly.append(apply(into: observing(makeMemory())))
            let directory = scratch()
            defer { removeDirectory(directory) }
            let totals = FlushTotals()
            let storage = try tier(makeMemory(), directory, totals: totals)
            withDisk.append(apply(into: observing(storage)))
            finalFlush = time { storage.close() }
            lastTotals = totals.summary
            bytesPerUser = Double(fileBytes(directory)) / Double(storage.tierStatistics.diskUsers)
        }
        let best = memoryOnly.min()!
        let bestDisk = withDisk.min()!
        print(
            String(
                format:
                    "%@: memory only %.0f updates/s, with disk %.0f updates/s: %.2f of memory-only; "
                    + "%d flushes wrote %d users in %.2f s (%.0f users/s), final flush %.2f s; %.0f bytes/user on disk",
                name, Double(stream.count) / best, Double(stream.count) / bestDisk, best / bestDisk, lastTotals.flushes,
                lastTotals.users, lastTotals.seconds, Double(lastTotals.users) / lastTotals.seconds, finalFlush,
                bytesPerUser))
    }
}

// MARK: Latency

func percentiles(_ samples: [Double]) -> String {
    let sorted = samples.sorted()
    func at(_ fraction: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))] }
    return String(format: "p50 %.2f µs, p99 %.2f µs (%d lookups)", at(0.5) * 1e6, at(0.99) * 1e6, sorted.count)
}

func latency() throws {
    let users = 100_000
    let stream = updates(users: users, count: users)
    let receivedAt = PresenceTime.now()
    let keys = stream.map(\.from.bare)
    var random = SplitMix64(seed: 11)
    print("lookup latency by the tier that answers, \(users) users on disk (release, library)")
    for (name, memory) in [
        ("dictionary+disk", DictionaryMemoryStorage() as (any MemoryStorage)?),
        ("lru 1k+disk", LRUMemoryStorage(countLimit: 1_000) as (any MemoryStorage)?),
        ("disk only", nil),
    ] {
        let directory = scratch()
        defer { removeDirectory(directory) }
        let storage = try tier(memory, directory)
        for update in stream { storage.apply(update, receivedAt: receivedAt) }
        storage.flush()
        var byTier: [String: [Double]] = [:]
        for _ in 0 ..< 200_000 {
            let key = keys[random.below(keys.count)]
            let start = ContinuousClock.now
            let (_, tier) = storage.tieredLookup(key)
            let elapsed = seconds(ContinuousClock.now - start)
            byTier[tier?.rawValue ?? "none", default: []].append(elapsed)
        }
        for (tier, samples) in byTier.sorted(by: { $0.key > $1.key }) {
            print("  \(name), answered by \(tier): \(percentiles(samples))")
        }
        storage.close()
    }
}

/// The same over HTTP: `presence serve` on a data directory of `users` users with an LRU of 1,000, one keep-alive
/// client asking for random users one at a time; each answer's `origin` says which tier answered.
func httpLatency() throws {
    let users = 100_000
    let directory = scratch()
    defer { removeDirectory(directory) }
    let stream = updates(users: users, count: users)
    let receivedAt = PresenceTime.now()
    let writing = try tier(DictionaryMemoryStorage(), directory)
    for update in stream { writing.apply(update, receivedAt: receivedAt) }
    writing.close()
    let keys = stream.map(\.from.bare.rawValue)
    print("HTTP GET /v1/presence/{jid}, \(users) users on disk, one keep-alive client (release)")
    for arguments in [["--storage", "dictionary"], ["--storage", "lru", "--count-limit", "1000"]] {
        let service = try ServiceProcess(arguments: ["--data-dir", directory] + arguments)
        let client = try KeepAliveClient(port: service.httpPort)
        var random = SplitMix64(seed: 23)
        var byOrigin: [String: [Double]] = [:]
        for _ in 0 ..< 50_000 {
            let key = keys[random.below(keys.count)]
            let start = ContinuousClock.now
            guard let body = client.get("/v1/presence/" + key)?.body else { continue }
            let elapsed = seconds(ContinuousClock.now - start)
            let text = String(decoding: body, as: UTF8.self)
            let origin = text.contains("\"origin\":\"disk\"") ? "disk" : text.contains("\"origin\":\"storage\"") ? "memory" : "other"
            byOrigin[origin, default: []].append(elapsed)
        }
        for (origin, samples) in byOrigin.sorted(by: { $0.key > $1.key }) {
            print("  \(arguments.joined(separator: " ")), answered by \(origin): \(percentiles(samples))")
        }
        service.stop()
    }
}

// MARK: Restart

func restart() throws {
    let users = 1_000_000
    // RESTART_DIR keeps the written directory between runs.
    let kept = ProcessInfo.processInfo.environment["RESTART_DIR"]
    let directory = kept ?? scratch()
    defer { if kept == nil { removeDirectory(directory) } }
    let stream = updates(users: users, count: users)
    let receivedAt = PresenceTime.now()
    var written = 0.0
    if !FileManager.default.fileExists(atPath: directory + "/" + SQLitePresenceStore.fileName) {
        let writing = try tier(DictionaryMemoryStorage(), directory)
        for update in stream { writing.apply(update, receivedAt: receivedAt) }
        written = time { writing.close() }
    }
    print(String(format: "restart: %d users written in %.2f s; file %.1f MB (%.0f bytes/user)", users, written,
        Double(fileBytes(directory)) / 1e6, Double(fileBytes(directory)) / Double(users)))
    for (name, makeMemory) in [
        ("dictionary", { DictionaryMemoryStorage() as (any MemoryStorage)? }),
        ("lru 100k", { LRUMemoryStorage(countLimit: 100_000) as (any MemoryStorage)? }),
        ("disk only", { nil }),
    ] {
        var restored = 0
        let elapsed = try time {
            let storage = try tier(makeMemory(), directory)
            restored = storage.count
            storage.close()
        }
        print(String(format: "  library, %@: %d users restored in %.2f s", name, restored, elapsed))
    }
    for storage in ["dictionary", "lru"] {
        var samples: [Double] = []
        for _ in 0 ..< 3 {
            let start = ContinuousClock.now
            let service = try ServiceProcess(
                arguments: ["--data-dir", directory, "--storage", storage] + (storage == "lru" ? ["--count-limit", "100000"] : []))
            samples.append(seconds(ContinuousClock.now - start))
            let client = try KeepAliveClient(port: service.httpPort)
            let answer = client.get("/v1/presence/\(stream[users / 2].from.bare.rawValue)")
            precondition(answer?.status == 200, "the service answers a restored user")
            service.stop()
        }
        print(String(format: "  presence serve --storage %@: start to answering (ports bound, every user restored) %.2f s best of 3, %.2f s worst",
            storage, samples.min()!, samples.max()!))
    }
}

// MARK: kill -9

/// `updatesApplied` and the disk tier's flush count, from one `/v1/stats` answer.
func progress(_ client: KeepAliveClient) -> (applied: Int, flushes: Int)? {
    guard let body = client.get("/v1/stats")?.body,
        let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
        let applied = object["updatesApplied"] as? Int,
        let flushes = (object["disk"] as? [String: Any])?["flushes"] as? Int
    else { return nil }
    return (applied, flushes)
}

func kill9(_ runs: Int) throws {
    let directory = scratch()
    defer { removeDirectory(directory) }
    let users = 1_000
    var torn = 0
    var missing = 0
    var olderThanFlushed = 0
    var checked = 0
    var random = SplitMix64(seed: 17)
    var lastSent = 0
    var mustSurvive = 0
    var restartSeconds: [Double] = []
    for run in 0 ..< runs {
        let start = ContinuousClock.now
        let service = try ServiceProcess(arguments: ["--data-dir", directory, "--disk-flush-interval", "50"])
        restartSeconds.append(seconds(ContinuousClock.now - start))
        let client = try KeepAliveClient(port: service.httpPort)
        if run > 0 {
            // What the killed run left: for each user a status they really had, none older than what a completed
            // flush had written before the kill.
            let query = (0 ..< users).map { "jid=u\($0)@example.com" }.joined(separator: "&")
            let results =
                client.get("/v1/presence?" + query).flatMap {
                    (try? JSONSerialization.jsonObject(with: Data($0.body)) as? [String: Any])?["results"]
                        as? [[String: Any]]
                } ?? []
            for user in 0 ..< users {
                checked += 1
                guard user < results.count, results[user]["state"] as? String == "available" else {
                    missing += 1
                    continue
                }
                let result = results[user]
                guard let status = result["status"] as? String, status.hasPrefix("round "),
                    let seen = Int(status.dropFirst(6)), seen <= lastSent
                else {
                    torn += 1
                    continue
                }
                if seen < mustSurvive { olderThanFlushed += 1 }
            }
        }
        // Feed flat out, round after round; halfway, note what was applied and the flush count; kill -9 at a random
        // moment once two more flushes have completed (the second one began after the note).
        let descriptor = try LoopbackTCP.connect(port: service.feedPort)
        let killAfter = Double(100 + random.below(400)) / 1000
        let firstRound = lastSent + 1
        var checkpoint: (round: Int, flushes: Int)?
        var flushedSinceCheckpoint = false
        let started = ContinuousClock.now
        while seconds(ContinuousClock.now - started) < killAfter || !flushedSinceCheckpoint {
            lastSent += 1
            var text = ""
            for user in 0 ..< users {
                text += "<presence from='u\(user)@example.com/desk'><status>round \(lastSent)</status></presence>"
            }
            try Array(text.utf8).withUnsafeBytes { try LoopbackTCP.sendAll(descriptor, $0) }
            guard let now = progress(client) else { continue }
            if checkpoint == nil && seconds(ContinuousClock.now - started) >= killAfter / 2 {
                checkpoint = (firstRound - 1 + now.applied / users, now.flushes)
            } else if let checkpoint, now.flushes >= checkpoint.flushes + 2 {
                flushedSinceCheckpoint = true
            }
        }
        kill(service.processIdentifier, SIGKILL)
        close(descriptor)
        _ = service.stop()
        mustSurvive = checkpoint?.round ?? 0
    }
    let sorted = restartSeconds.sorted()
    print(
        "kill -9 during flat-out ingest, \(runs) runs, \(users) users: every restart opened (\(runs) of \(runs)); "
            + "\(checked) statuses checked: torn or never sent \(torn), missing \(missing), "
            + "older than a completed flush \(olderThanFlushed); restart to answering p50 "
            + String(format: "%.2f s, max %.2f s", sorted[sorted.count / 2], sorted.last!))
}

let mode = CommandLine.arguments.dropFirst().first ?? "ingest"
switch mode {
case "ingest": try ingest()
case "latency": try latency()
case "http": try httpLatency()
case "restart": try restart()
case "kill9": try kill9(Int(CommandLine.arguments.dropFirst(2).first ?? "100") ?? 100)
default: print("modes: ingest, latency, restart, kill9 N")
}
