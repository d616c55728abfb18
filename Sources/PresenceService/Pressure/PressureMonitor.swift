import Logging
import PresencePressure
import PresenceStore
import ServiceLifecycle

/// Checks real memory-pressure sources (the resident-memory budget, Linux PSI and cgroup events) on a timer
/// while the service runs, hands each event to the storage and records what it cost.
public struct PressureMonitor: Service {
    let sources: [any MemoryPressureSource]
    let storage: any MemoryStorage
    let statistics: ServiceStatistics
    let interval: Duration
    let logger: Logger

    public init(
        sources: [any MemoryPressureSource], storage: any MemoryStorage, statistics: ServiceStatistics,
        interval: Duration, logger: Logger
    ) {
        self.sources = sources
        self.storage = storage
        self.statistics = statistics
        self.interval = interval
        self.logger = logger
    }

    public func run() async throws {
        guard !sources.isEmpty else {
            try? await gracefulShutdown()
            return
        }
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                try await Task.sleep(for: interval)
            } catch {
                return
            }
            var highest = MemoryPressure.normal
            defer { statistics.recordPressureCheck(highest) }
            for source in sources {
                guard let level = source.check(.timer) else { continue }
                highest = max(highest, level)
                let response = storage.handle(level)
                statistics.record(
                    PressureEvent(time: PresenceTime.now(), source: source.description, response: response))
                logger.warning(
                    "memory pressure",
                    metadata: [
                        "level": "\(level.rawValue)", "source": "\(source.description)",
                        "evicted": "\(response.evicted)",
                        "entriesAfter": "\(response.entriesAfter)", "bytesBefore": "\(response.bytesBefore)",
                        "bytesAfter": "\(response.bytesAfter)", "overBudget": "\(response.overBudget)",
                    ])
            }
        }
    }
}
