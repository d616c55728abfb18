import Dispatch
import Foundation
import PresenceDisk
import PresenceStore
import PresenceWire

/// Runs `compare --sweep`: the dictionary once, then every evicting storage at every value of the swept limit,
/// on the machine's cores.
struct SweepRunner {
    let options: ReplaySettings
    let specification: SweepSpecification
    let steps: Int
    /// Whether each evicting storage is also swept with a disk tier under it (`KIND+disk`).
    var withDisk = false

    /// One replay to run: a storage at a value.
    private struct Job {
        let kind: MemoryStorageKind
        let value: Int
    }

    func run(_ input: InputSource) throws -> (report: SweepReport, failed: Bool) {
        let runner = ReplayRunner(options: options, measuresRefill: false)
        let values = specification.values(steps: steps)
        let dictionary = try runner.run(
            input, into: .dictionary, configuration: options.storage.configuration(memoryBudget: nil),
            memoryBudget: nil, showsProgress: true
        ).report(listing: 0)
        let evicting = MemoryStorageRegistry.kinds.filter(\.evicts)
        let kinds = evicting + (withDisk ? evicting.map { $0.withDiskTier() } : [])
        let jobs = kinds.flatMap { kind in values.map { Job(kind: kind, value: $0) } }
        let results = Locked<[Int: ReplayReport]>([:])
        let failures = Locked<[any Error]>([])
        let done = Locked(0)
        let progress = SweepProgress(total: jobs.count)
        let runOne: @Sendable (Int) -> Void = { index in
            let job = jobs[index]
            do {
                let outcome = try runner.run(
                    input, into: job.kind, configuration: configuration(for: job.value),
                    memoryBudget: specification.parameter == .memoryBudget ? job.value : nil, showsProgress: false)
                let report = outcome.report(listing: 0)
                outcome.close()
                results.withLock { $0[index] = report }
            } catch {
                failures.withLock { $0.append(error) }
            }
            progress.show(
                done: done.withLock { count in
                    count += 1
                    return count
                })
        }
        if specification.parameter == .memoryBudget {
            // A resident-memory budget is the whole process's: replays at different budgets cannot share it.
            for index in jobs.indices { runOne(index) }
        } else {
            DispatchQueue.concurrentPerform(iterations: jobs.count, execute: runOne)
        }
        progress.finish()
        if let failure = failures.withLock({ $0.first }) { throw failure }
        let reports = results.withLock { $0 }
        let series = kinds.enumerated().map { kindIndex, kind in
            SweepReport.Series(
                storage: kind.name,
                points: values.indices.map { valueIndex in
                    let report = reports[kindIndex * values.count + valueIndex]!
                    return SweepReport.Point(
                        value: values[valueIndex], lost: report.lost, stale: report.stale, lossRate: report.lossRate,
                        staleRate: report.users > 0 ? Double(report.stale) / Double(report.users) : 0,
                        evictions: report.evictions, storageEstimatedBytes: report.storageEstimatedBytes)
                })
        }
        let report = SweepReport(
            parameter: specification.parameter.rawValue, unit: specification.parameter.isBytes ? "bytes" : "users",
            values: values, users: dictionary.users, presenceUpdates: dictionary.presenceUpdates,
            dictionaryEstimatedBytes: dictionary.storageEstimatedBytes, dictionaryLost: dictionary.lost,
            series: series)
        let failed = dictionary.error != nil || reports.values.contains { $0.error != nil }
        return (report, failed)
    }

    /// The storage configuration of the command line with the swept limit set to `value`.
    private func configuration(for value: Int) -> StorageConfiguration {
        var configuration = options.storage.configuration(memoryBudget: options.pressure.memoryBudget)
        switch specification.parameter {
        case .countLimit: configuration.countLimit = value
        case .costLimit: configuration.costLimit = value
        case .memoryBudget: configuration.memoryBudget = value
        }
        return configuration
    }
}

/// `sweep: 7/24 replays` on standard error, only on a terminal.
private final class SweepProgress: Sendable {
    private let total: Int
    private let enabled = isatty(STDERR_FILENO) != 0

    init(total: Int) { self.total = total }

    func show(done: Int) {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\rsweep: \(done)/\(total) replays ".utf8))
    }

    func finish() {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}
