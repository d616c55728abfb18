import ArgumentParser
import Logging
import PresenceDisk
import PresenceService
import PresenceStore

/// Opens `serve`'s disk tier: restores every user before the service answers, logs what it restored and how
/// long it took, and turns a file or directory it cannot use into one clear line and exit code 74 (EX_IOERR).
enum DiskTierOpening {
    static func open(
        _ directory: String, memory: (any MemoryStorage)?, options: DiskTierSettings, metrics: ServiceMetrics,
        logger: Logger
    ) throws -> TieredStorage {
        let started = ContinuousClock.now
        let failing = Locked(false)
        do {
            let store = try SQLitePresenceStore(directory: directory, reset: options.reset)
            let tier = try TieredStorage(
                memory: memory, disk: store, configuration: options.configuration,
                onFlush: { [logger, path = store.path] outcome in
                    metrics.recordFlush(outcome)
                    // One line when writing starts failing and one when it recovers, not one per flush.
                    let wasFailing = failing.withLock { failing in
                        defer { failing = outcome.error != nil }
                        return failing
                    }
                    if let error = outcome.error, !wasFailing {
                        logger.error(
                            "disk tier write failed; statuses stay in memory and are retried every flush",
                            metadata: ["file": "\(path)", "error": "\(error)"])
                    } else if outcome.error == nil && wasFailing {
                        logger.notice("disk tier writing again", metadata: ["file": "\(path)"])
                    }
                })
            let elapsed = ContinuousClock.now - started
            logger.info(
                "disk tier open",
                metadata: [
                    "file": "\(store.path)", "restored": "\(tier.count)",
                    "asOf": "\(tier.restoredAt?.description ?? "-")",
                    "seconds": "\(elapsed.seconds)",
                ])
            return tier
        } catch let error as DiskTierError {
            logger.critical("\(error.description)")
            throw ExitCode(74)
        }
    }
}
