import PresenceWire
import PresenceIngest
import PresenceStore
import XMPPStream

/// The report of `presence replay`, and of each storage in `presence compare`. Scripts depend on it: fields are
/// added, never renamed or removed.
public struct ReplayReport: Sendable, JSONDocument {
    public var storage: String
    public var stanzas: Int
    public var presenceUpdates: Int
    public var ignored: [String: Int]
    public var rejected: [String: Int]
    public var users: Int
    public var retained: Int
    public var lost: Int
    public var stale: Int
    public var lossRate: Double
    public var evictions: [String: Int]
    public var lostUsers: [String]
    public var staleUsers: [String]
    public var lostByCause: [String: Int]
    public var error: ErrorReport?
    public var stanzasPerSecond: Int
    public var peakResidentBytes: Int?
    public var bytes: Int
    public var elapsedSeconds: Double
    public var storageEntries: Int
    public var storageEstimatedBytes: Int
    public var pressureEvents: [PressureEventReport]
    public var notApplicable: [String]
    public var notes: [String]
    /// The probes a `cache-else-probe` lookup would send to read every user once after the replay, refills'
    /// own evictions included; null when not measured.
    public var refillProbes: Int?
    /// The disk tier of a `KIND+disk` or `disk` storage, after the audit read every user once; null without one.
    public var disk: DiskReport?

    public var ignoredTotal: Int { ignored.values.reduce(0, +) }
    public var rejectedTotal: Int { rejected.values.reduce(0, +) }

    /// - Parameter listing: how many lost and stale users to name.
    public init(
        storage: String, statistics: IngestStatistics, error: XMPPStreamError?, audit: AuditReport,
        refill: RefillCost? = nil, storageStatistics: StorageStatistics, pressure: [PressureResponse],
        elapsedSeconds: Double,
        peakResidentBytes: Int?, notApplicable: [String], notes: [String], listing limit: Int
    ) {
        self.storage = storage
        stanzas = statistics.stanzas
        presenceUpdates = statistics.presenceUpdates
        ignored = Dictionary(uniqueKeysWithValues: statistics.ignored.map { ($0.key.rawValue, $0.value) })
        rejected = Dictionary(uniqueKeysWithValues: statistics.rejected.map { ($0.key.description, $0.value) })
        users = audit.users
        retained = audit.retained
        lost = audit.lost.count
        stale = audit.stale.count
        lossRate = audit.lossRate
        evictions = Dictionary(uniqueKeysWithValues: audit.evictions.map { ($0.key.rawValue, $0.value) })
        lostUsers = audit.lost.prefix(limit).map(\.rawValue)
        staleUsers = audit.stale.prefix(limit).map(\.rawValue)
        lostByCause = Dictionary(
            uniqueKeysWithValues: audit.lostByCause.map { ($0.key?.rawValue ?? "unknown", $0.value) })
        self.error = error.map(ErrorReport.init)
        stanzasPerSecond = elapsedSeconds > 0 ? Int(Double(statistics.stanzas) / elapsedSeconds) : 0
        self.peakResidentBytes = peakResidentBytes
        bytes = statistics.bytes
        self.elapsedSeconds = elapsedSeconds
        storageEntries = storageStatistics.entries
        storageEstimatedBytes = storageStatistics.estimatedBytes
        pressureEvents = pressure.map { PressureEventReport($0) }
        self.notApplicable = notApplicable
        self.notes = notes
        refillProbes = refill?.probes
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("bytes"); writer.int(bytes)
            writer.key("disk")
            if let disk { disk.write(to: &writer) } else { writer.null() }
            writer.key("elapsedSeconds"); writer.double(elapsedSeconds)
            writer.key("error")
            if let error { error.write(to: &writer) } else { writer.null() }
            writer.key("evictions"); writer.counts(evictions)
            writer.key("ignored"); ReplayReport.writeCounts(ignored, to: &writer)
            writer.key("lossRate"); writer.double(lossRate)
            writer.key("lost"); writer.int(lost)
            writer.key("lostByCause"); writer.counts(lostByCause)
            writer.key("lostUsers"); writer.strings(lostUsers)
            writer.key("notApplicable"); writer.strings(notApplicable)
            writer.key("notes"); writer.strings(notes)
            writer.key("peakResidentBytes"); writer.int(peakResidentBytes)
            writer.key("presenceUpdates"); writer.int(presenceUpdates)
            writer.key("refillProbes"); writer.int(refillProbes)
            writer.key("pressureEvents")
            writer.array(pressureEvents) { writer, event in event.write(to: &writer) }
            writer.key("rejected"); ReplayReport.writeCounts(rejected, to: &writer)
            writer.key("retained"); writer.int(retained)
            writer.key("stale"); writer.int(stale)
            writer.key("staleUsers"); writer.strings(staleUsers)
            writer.key("stanzas"); writer.int(stanzas)
            writer.key("stanzasPerSecond"); writer.int(stanzasPerSecond)
            writer.key("storage"); writer.string(storage)
            writer.key("storageEntries"); writer.int(storageEntries)
            writer.key("storageEstimatedBytes"); writer.int(storageEstimatedBytes)
            writer.key("users"); writer.int(users)
        }
    }

    /// `{"byReason": {...}, "total": n}`.
    private static func writeCounts(_ counts: [String: Int], to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("byReason"); writer.counts(counts)
            writer.key("total"); writer.int(counts.values.reduce(0, +))
        }
    }
}

/// The report of `presence compare`: every storage on the same stream, and the verdict.
public struct CompareReport: Sendable, JSONDocument {
    public var storages: [ReplayReport]
    public var verdict: String

    public init(storages: [ReplayReport], verdict: String) {
        self.storages = storages
        self.verdict = verdict
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("storages")
            writer.array(storages) { writer, report in report.write(to: &writer) }
            writer.key("verdict"); writer.string(verdict)
        }
    }
}
