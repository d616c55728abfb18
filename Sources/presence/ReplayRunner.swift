import Foundation
import PresenceIngest
import PresencePressure
import PresenceStore
import PresenceWire
import XMPPStream

/// One replay of an input into one storage, with its timing, memory and audit.
struct ReplayOutcome {
    let kind: MemoryStorageKind
    let storage: any MemoryStorage
    let statistics: IngestStatistics
    let error: XMPPStreamError?
    /// The comparison with the truth; nil when the runner did not audit (``ReplayRunner/audits``).
    let audit: AuditReport?
    /// The storage's counters at the audit, before any refill.
    let storageStatistics: StorageStatistics
    /// The probes reading every user once with `cache-else-probe` would send; nil when not measured.
    let refill: RefillCost?
    let pressure: [PressureResponse]
    let elapsed: Duration
    let peakResidentBytes: Int?
    let notApplicable: [String]
    let notes: [String]
    /// The disk tier's counters after the audit and the refill measure, for a storage with one.
    let disk: DiskReport?

    /// Closes a disk tier (a scratch one removes its directory); a storage without one needs nothing.
    func close() { storage.close() }

    /// The report of the wire format, naming at most `listing` lost and stale users.
    func report(listing: Int) -> ReplayReport {
        guard let audit else { preconditionFailure("a replay report needs a replay that audited") }
        var report = ReplayReport(
            storage: kind.name, statistics: statistics, error: error, audit: audit, refill: refill,
            storageStatistics: storageStatistics, pressure: pressure, elapsedSeconds: elapsed.seconds,
            peakResidentBytes: peakResidentBytes, notApplicable: notApplicable, notes: notes, listing: listing)
        report.disk = disk
        return report
    }
}

/// Reads an input into a storage through ``PresenceReplay``, showing progress on a terminal.
struct ReplayRunner {
    let options: ReplaySettings
    /// Whether to keep the truth and compare the storage with it after the replay. A command that only reads the
    /// storage afterwards (`query`) turns it off, and then pays for no second copy of the users.
    var audits = true
    /// Whether to measure the refill cost after the audit, which changes the storage (see ``RefillCost``). A
    /// command that reads the storage afterwards (`sweep`) turns it off.
    var measuresRefill = true

    func run(_ input: InputSource, into kind: MemoryStorageKind) throws -> ReplayOutcome {
        let budget = options.pressure.memoryBudget
        return try run(
            input, into: kind, configuration: options.storage.configuration(memoryBudget: budget), memoryBudget: budget,
            showsProgress: true)
    }

    /// Replays `input` into `kind` made with `configuration`, under a resident-memory budget of `memoryBudget`
    /// (a sweep varies both); progress is shown on a terminal only when `showsProgress`.
    func run(
        _ input: InputSource, into kind: MemoryStorageKind, configuration: StorageConfiguration, memoryBudget: Int?,
        showsProgress: Bool
    ) throws -> ReplayOutcome {
        ProcessMemory.resetPeakResident()
        let storage = try kind.make(configuration)
        let (sources, unavailable, kernel) = options.pressure.makeSources(memoryBudget: memoryBudget)
        defer { kernel?.stop() }
        let replay = PresenceReplay(
            storage: storage, sources: (options.scripted.source.map { [$0] } ?? []) + sources,
            truth: audits ? .forAudit(of: kind) : .none, configuration: options.stream.configuration,
            decoder: options.stream.decoder)
        let progress = Progress(label: kind.name, enabled: showsProgress)
        let start = ContinuousClock.now
        var failure: XMPPStreamError?
        try input.read { chunk in
            do throws(XMPPStreamError) {
                try replay.feed(chunk)
            } catch {
                failure = error
                return false
            }
            progress.update(bytes: replay.statistics.bytes, stanzas: replay.statistics.stanzas, since: start)
            return true
        }
        if failure == nil {
            do throws(XMPPStreamError) { try replay.finish() } catch { failure = error }
        }
        // What is dirty goes to disk, as the flusher would have written it by the time anyone reads: the audit
        // then reads evicted users from disk, at the disk's cost. Ingest time includes no flush.
        let elapsed = start.duration(to: .now)
        progress.finish()
        storage.flush()
        let audit = replay.audit()
        let storageStatistics = storage.statistics
        let refill = measuresRefill ? replay.measureRefill() : nil
        return ReplayOutcome(
            kind: kind, storage: storage, statistics: replay.statistics, error: failure, audit: audit,
            storageStatistics: storageStatistics, refill: refill,
            pressure: replay.pressureResponses, elapsed: elapsed, peakResidentBytes: ProcessMemory.peakResidentBytes(),
            notApplicable: options.storage.notApplicable(to: kind), notes: unavailable.map { "psi: \($0)" },
            disk: storage.diskTierStatistics.map(DiskReport.init))
    }

    /// Replays `path` into `kind`; an input that cannot be opened is reported on standard error and ends the
    /// command with exit code 66.
    func run(path: String, into kind: MemoryStorageKind) throws -> ReplayOutcome {
        try ReplayRunner.exitingIfUnopenable {
            let source = InputSource(path: path)
            try source.checkReadable()
            return try run(source, into: kind)
        }
    }

    /// Runs `body`, turning an input that cannot be opened into a message and exit code 66.
    static func exitingIfUnopenable<R>(_ body: () throws -> R) throws -> R {
        do {
            return try body()
        } catch let error as InputSource.CannotOpen {
            FileHandle.standardError.write(Data("presence: \(error)\n".utf8))
            throw ExitStatus.cannotOpenInput
        }
    }
}
