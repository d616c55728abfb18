import PresenceIngest
import PresenceStore
import Synchronization

/// What the service has done, shared by the feed connections, the pressure monitor and the API.
///
/// Counters are atomics (`Synchronization.Atomic`, uncontended-fast and, unlike `Mutex`, free of the
/// priority-inheritance futex); the pressure event log is behind the package's one lock, ``Locked``.
public final class ServiceStatistics: Sendable {
    private let feeders = Atomic<Int>(0)
    private let connections = Atomic<Int>(0)
    private let stanzas = Atomic<Int>(0)
    private let updates = Atomic<Int>(0)
    private let ignored = Atomic<Int>(0)
    private let rejected = Atomic<Int>(0)
    private let streamErrors = Atomic<Int>(0)
    private let pressureTotal = Atomic<Int>(0)
    /// The most recent pressure events: a service under pressure for days must not grow without bound.
    private let pressureLog = Locked<[PressureEvent]>([])
    private let checkedPressure = Locked(MemoryPressure.normal)
    private static let pressureLogCapacity = 1000

    public init() {}

    public var feedersConnected: Int { feeders.load(ordering: .relaxed) }
    public var connectionsAccepted: Int { connections.load(ordering: .relaxed) }
    public var stanzasRead: Int { stanzas.load(ordering: .relaxed) }
    public var updatesApplied: Int { updates.load(ordering: .relaxed) }
    public var stanzasIgnored: Int { ignored.load(ordering: .relaxed) }
    public var presencesRejected: Int { rejected.load(ordering: .relaxed) }
    public var streamErrorCount: Int { streamErrors.load(ordering: .relaxed) }

    func feederConnected() {
        feeders.add(1, ordering: .relaxed)
        connections.add(1, ordering: .relaxed)
    }

    func feederDisconnected() { feeders.subtract(1, ordering: .relaxed) }

    /// Adds what an ingest session counted for a batch of stanzas it applied.
    func record(_ applied: IngestStatistics) {
        func add(_ counter: borrowing Atomic<Int>, _ count: Int) {
            if count > 0 { counter.add(count, ordering: .relaxed) }
        }
        add(stanzas, applied.stanzas)
        add(updates, applied.presenceUpdates)
        add(ignored, applied.ignoredTotal)
        add(rejected, applied.rejectedTotal)
    }

    func streamErrorOccurred() { streamErrors.add(1, ordering: .relaxed) }

    func record(_ event: PressureEvent) {
        pressureTotal.add(1, ordering: .relaxed)
        pressureLog.withLock { log in
            log.append(event)
            if log.count > ServiceStatistics.pressureLogCapacity {
                log.removeFirst(log.count - ServiceStatistics.pressureLogCapacity)
            }
        }
    }

    /// Pressure events since the service started (the log keeps only the most recent).
    public var pressureEventTotal: Int { pressureTotal.load(ordering: .relaxed) }

    public var pressureEvents: [PressureEvent] { pressureLog.current }
    /// The pressure level the sources reported at their last check: `normal` when none reported any, so it falls
    /// back once pressure is gone.
    public var pressureLevel: MemoryPressure { checkedPressure.withLock { $0 } }

    /// The highest level the pressure sources reported at one check (`normal` when none did).
    func recordPressureCheck(_ level: MemoryPressure) { checkedPressure.withLock { $0 = level } }
}

/// One pressure event the service delivered to its storage, and what it cost.
public struct PressureEvent: Sendable {
    public var time: PresenceTime
    public var source: String
    public var response: PressureResponse
}
