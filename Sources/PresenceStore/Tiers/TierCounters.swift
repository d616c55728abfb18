import Synchronization

/// A disk tier's lookup counters, bumped on the read path without a lock.
final class TierCounters: Sendable {
    let memoryHits = Atomic<Int>(0)
    let diskHits = Atomic<Int>(0)
    let misses = Atomic<Int>(0)
    let diskReads = Atomic<Int>(0)
    let diskReadErrors = Atomic<Int>(0)
}
