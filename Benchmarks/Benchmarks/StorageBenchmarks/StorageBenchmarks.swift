import Benchmark
import Foundation
import PresenceStore
import PresenceWorkload
import Synchronization

// Set, get and update (apply a presence update) throughput of each storage with 1, 2, 4 and 8 threads, against
// the concurrent-queue dictionary many apps use; and the lock candidates. Bytes per user: the MemoryFootprint
// executable in this package.
// Every thread works on random users out of 100,000 (generated JIDs, as `presence generate` makes them).

enum Metrics {
    static let operationsPerSecond = BenchmarkMetric.custom("ops/s", polarity: .prefersLarger, useScalingFactor: false)
}

let userCount = 100_000
let operationsPerThread = 25_000

/// 100k users, their JIDs and one update each, generated once.
let fixture: (keys: [BareJID], updates: [PresenceUpdate], value: UserPresence) = {
    var random = SplitMix64(seed: 5)
    let directory = Directory(users: userCount, maxResources: 3, random: &random)
    let updates = directory.people.map { person in
        PresenceUpdate(
            from: try! JID(person.jid + "/" + person.devices[0].resource), availability: .available,
            details: PresenceDetails(show: .away, status: "In a meeting", priority: Int8(person.devices[0].priority)))
    }
    var value = UserPresence()
    value.apply(updates[0], receivedAt: PresenceTime(secondsSinceEpoch: 1_795_400_000))
    return (updates.map(\.from.bare), updates, value)
}()

/// Runs `threads` threads that each call `operation` `operationsPerThread` times with a random user index, and
/// records the total operations per second.
func run(_ benchmark: Benchmark, threads: Int, _ operation: @escaping @Sendable (Int) -> Void) {
    let start = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    for thread in 0 ..< threads {
        done.enter()
        Thread.detachNewThread {
            var random = SplitMix64(seed: UInt64(thread) &* 7919 &+ 1)
            var indices = [Int](repeating: 0, count: operationsPerThread)
            for index in indices.indices { indices[index] = random.below(userCount) }
            start.wait()
            for index in indices { operation(index) }
            done.leave()
        }
    }
    Thread.sleep(forTimeInterval: 0.05)  // let every thread reach the start line
    benchmark.startMeasurement()
    let began = ContinuousClock.now
    for _ in 0 ..< threads { start.signal() }
    done.wait()
    let elapsed = began.duration(to: .now)
    benchmark.stopMeasurement()
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    benchmark.measurement(Metrics.operationsPerSecond, Int(Double(threads * operationsPerThread) / seconds))
}

func filled(_ storage: any MemoryStorage) -> any MemoryStorage {
    for update in fixture.updates { storage.apply(update, receivedAt: PresenceTime(secondsSinceEpoch: 1_795_400_000)) }
    return storage
}

func filledBaseline() -> QueueDictionary {
    let baseline = QueueDictionary()
    for update in fixture.updates { baseline.apply(update, receivedAt: PresenceTime(secondsSinceEpoch: 1_795_400_000)) }
    return baseline
}

/// Counts the changes an observer is told, from any thread.
final class ChangeCounter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// A critical section of the size the storages hold their locks for: a few hundred nanoseconds of work.
final class Counter: @unchecked Sendable {
    // @unchecked: `values` is only touched inside the lock under test.
    var values = [Int](repeating: 0, count: 64)
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, Metrics.operationsPerSecond],
        units: [Metrics.operationsPerSecond: .count],
        warmupIterations: 1, maxDuration: .seconds(5), maxIterations: 5)

    let storages: [(String, () -> any MemoryStorage)] = [
        ("dictionary", { DictionaryMemoryStorage() }),
        ("nscache", { NSCacheMemoryStorage() }),
        ("lru", { LRUMemoryStorage() }),
    ]
    let time = PresenceTime(secondsSinceEpoch: 1_795_400_000)

    // The operations capture local copies of the fixture: reading the global from every thread would retain
    // and release its arrays on each operation and measure refcount contention instead of the storage.
    let (keys, updates, value) = fixture
    for threads in [1, 2, 4, 8] {
        for (name, make) in storages {
            Benchmark("\(name) get, \(threads) threads") { benchmark in
                let storage = filled(make())
                run(benchmark, threads: threads) { blackHole(storage.get(keys[$0])) }
            }
            Benchmark("\(name) set, \(threads) threads") { benchmark in
                let storage = filled(make())
                run(benchmark, threads: threads) { storage.set(value, for: keys[$0]) }
            }
            Benchmark("\(name) update, \(threads) threads") { benchmark in
                let storage = filled(make())
                run(benchmark, threads: threads) { storage.apply(updates[$0], receivedAt: time) }
            }
            // The same updates with a change observer installed: what publishing visible changes costs when a
            // screen listens (without one, the storage only loads one atomic flag per write).
            Benchmark("\(name) update with a change observer, \(threads) threads") { benchmark in
                let storage = filled(make())
                let changes = ChangeCounter()
                storage.setChangeObserver { _ in changes.increment() }
                run(benchmark, threads: threads) { storage.apply(updates[$0], receivedAt: time) }
                blackHole(changes.value)
            }
        }
        Benchmark("queue baseline get, \(threads) threads") { benchmark in
            let baseline = filledBaseline()
            run(benchmark, threads: threads) { blackHole(baseline.get(keys[$0])) }
        }
        Benchmark("queue baseline set, \(threads) threads") { benchmark in
            let baseline = filledBaseline()
            run(benchmark, threads: threads) { baseline.set(value, for: keys[$0]) }
        }
        Benchmark("queue baseline update, \(threads) threads") { benchmark in
            let baseline = filledBaseline()
            run(benchmark, threads: threads) { baseline.apply(updates[$0], receivedAt: time) }
        }
        Benchmark("dictionary 1 stripe update, \(threads) threads") { benchmark in
            let storage = filled(DictionaryMemoryStorage(stripes: 1))
            run(benchmark, threads: threads) { storage.apply(updates[$0], receivedAt: time) }
        }

        // Lock candidates around the same small critical section.
        Benchmark("lock pthread_mutex, \(threads) threads") { benchmark in
            let counter = Counter()
            let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
            pthread_mutex_init(mutex, nil)
            nonisolated(unsafe) let shared = mutex
            run(benchmark, threads: threads) { index in
                pthread_mutex_lock(shared)
                counter.values[index & 63] &+= 1
                pthread_mutex_unlock(shared)
            }
        }
        Benchmark("lock NSLock, \(threads) threads") { benchmark in
            let counter = Counter()
            let lock = NSLock()
            run(benchmark, threads: threads) { index in lock.withLock { counter.values[index & 63] &+= 1 } }
        }
        Benchmark("lock Synchronization.Mutex, \(threads) threads") { benchmark in
            let mutex = Mutex([Int](repeating: 0, count: 64))
            run(benchmark, threads: threads) { index in mutex.withLock { $0[index & 63] &+= 1 } }
        }
    }

    // NSCache's cost-sorted insert: with a cost limit, a set whose cost is higher than most walks the list.
    for users in [1_000, 10_000, 50_000] {
        Benchmark(
            "nscache with cost limit, set into \(users) users, 1 thread",
            configuration: .init(warmupIterations: 0, maxIterations: 2)
        ) { benchmark in
            let storage = NSCacheMemoryStorage(costLimit: Int.max / 2)
            for index in 0 ..< users { storage.set(fixture.value, for: fixture.keys[index]) }
            // Values of rising size (longer statuses): each costs more than the ones already stored.
            var value = fixture.value
            let sets = 200
            benchmark.startMeasurement()
            let began = ContinuousClock.now
            for index in 0 ..< sets {
                value.apply(
                    PresenceUpdate(
                        from: fixture.updates[index].from, availability: .available,
                        details: PresenceDetails(status: String(repeating: "x", count: 20 + index % 200))),
                    receivedAt: time)
                storage.set(value, for: fixture.keys[(users + index) % userCount])
            }
            let elapsed = began.duration(to: .now)
            benchmark.stopMeasurement()
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            benchmark.measurement(Metrics.operationsPerSecond, Int(Double(sets) / seconds))
        }
    }
}
