import PresenceStore
import Synchronization

/// What the service has done, shared by the feed connections, the pressure monitor and the API.
///
/// Counters are atomics (`Synchronization.Atomic`, uncontended-fast and, unlike `Mutex`, free of the
/// priority-inheritance futex); the pressure event log is behind a `PthreadMutex`.
public final class ServiceStatistics: Sendable {
    private let feeders = Atomic<Int>(0)
    private let connections = Atomic<Int>(0)
    private let stanzas = Atomic<Int>(0)
    private let updates = Atomic<Int>(0)
    private let ignored = Atomic<Int>(0)
    private let rejected = Atomic<Int>(0)
    private let streamErrors = Atomic<Int>(0)
    private let pressureTotal = Atomic<Int>(0)
    private let pressureLog = PressureLog()

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

    func record(stanzas: Int, updates: Int, ignored: Int, rejected: Int) {
        if stanzas > 0 { self.stanzas.add(stanzas, ordering: .relaxed) }
        if updates > 0 { self.updates.add(updates, ordering: .relaxed) }
        if ignored > 0 { self.ignored.add(ignored, ordering: .relaxed) }
        if rejected > 0 { self.rejected.add(rejected, ordering: .relaxed) }
    }

    func streamErrorOccurred() { streamErrors.add(1, ordering: .relaxed) }

    func record(_ event: PressureEvent) {
        pressureTotal.add(1, ordering: .relaxed)
        pressureLog.append(event)
    }

    /// Pressure events since the service started (the log keeps only the most recent).
    public var pressureEventTotal: Int { pressureTotal.load(ordering: .relaxed) }

    public var pressureEvents: [PressureEvent] { pressureLog.events }
    public var pressureLevel: MemoryPressure { pressureLog.events.last?.response.level ?? .normal }
}

/// One pressure event the service delivered to its storage, and what it cost.
public struct PressureEvent: Sendable {
    public var time: PresenceTime
    public var source: String
    public var response: PressureResponse
}

private final class PressureLog: @unchecked Sendable {
    // @unchecked: `storage` is only touched under `lock`.
    private let lock = PthreadMutex()
    private var storage: [PressureEvent] = []
    /// Keeps the last events only: a service under pressure for days must not grow without bound.
    private static let capacity = 1000

    func append(_ event: PressureEvent) {
        lock.withLock {
            storage.append(event)
            if storage.count > PressureLog.capacity { storage.removeFirst(storage.count - PressureLog.capacity) }
        }
    }

    var events: [PressureEvent] { lock.withLock { storage } }
}
