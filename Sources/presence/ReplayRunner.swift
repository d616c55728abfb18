import Foundation
import PresenceStore
import XMPPStream

/// One replay of an input into one storage, with its timing, memory and audit.
struct ReplayOutcome {
    let storageChoice: StorageChoice
    let storage: any MemoryStorage
    let statistics: IngestStatistics
    let error: XMPPStreamError?
    let audit: AuditReport
    let pressure: [PressureResponse]
    let elapsed: Duration
    let peakResidentBytes: Int?
    let notApplicable: [String]
    let notes: [String]
}

/// Reads an input into a storage through ``PresenceReplay``, showing progress on a terminal.
struct ReplayRunner {
    let storageOptions: StorageOptions
    let pressureOptions: PressureOptions
    let streamOptions: StreamOptions

    func run(_ input: InputSource, into choice: StorageChoice) throws -> ReplayOutcome {
        ReplayRunner.resetPeakResident()
        let storage = storageOptions.make(choice, memoryBudget: pressureOptions.memoryBudget?.bytes)
        let (sources, notes, kernel) = pressureOptions.makeSources()
        defer { kernel?.stop() }
        var replay = PresenceReplay(storage: storage, sources: sources, configuration: streamOptions.configuration,
                                    decoder: streamOptions.decoder)
        let progress = Progress(label: choice.rawValue)
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
        let elapsed = start.duration(to: .now)
        progress.finish()
        return ReplayOutcome(
            storageChoice: choice, storage: storage, statistics: replay.statistics, error: failure, audit: replay.audit(),
            pressure: replay.pressureResponses, elapsed: elapsed, peakResidentBytes: ResidentMemoryBudget.peakResidentBytes(),
            notApplicable: storageOptions.notApplicable(to: choice), notes: notes)
    }

    /// Replays `path` into `choice`; an input that cannot be opened is reported on standard error and ends the
    /// command with exit code 66.
    func run(path: String, into choice: StorageChoice) throws -> ReplayOutcome {
        try ReplayRunner.exitingIfUnopenable {
            let source = InputSource(path: path)
            try source.checkReadable()
            return try run(source, into: choice)
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

    /// Resets the kernel's peak-RSS mark (`VmHWM`) so that each run reports its own peak (Linux 4.0+).
    static func resetPeakResident() {
        guard let file = fopen("/proc/self/clear_refs", "w") else { return }
        fputs("5", file)
        fclose(file)
    }
}

/// Bytes read and stanzas per second on standard error, only when it is a terminal.
final class Progress {
    private let label: String
    private let enabled = isatty(STDERR_FILENO) != 0
    private var lastUpdate = ContinuousClock.now
    private var shown = false

    init(label: String) { self.label = label }

    func update(bytes: Int, stanzas: Int, since start: ContinuousClock.Instant) {
        guard enabled else { return }
        let now = ContinuousClock.now
        guard now - lastUpdate > .milliseconds(250) else { return }
        lastUpdate = now
        let seconds = max((now - start).seconds, 0.001)
        let line = "\r\(label): \(Format.bytes(bytes)) read, \(Format.count(stanzas)) stanzas, \(Format.count(Int(Double(stanzas) / seconds))) stanzas/s "
        FileHandle.standardError.write(Data(line.utf8))
        shown = true
    }

    func finish() {
        guard shown else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
