import Foundation
import PresenceStore
import XMPPStream

/// The JSON contract of `presence replay` (and of each entry of `presence compare`). Scripts depend on it: add
/// fields, never rename or remove them.
struct ReplayReport: Encodable {
    struct Counts: Encodable {
        let total: Int
        let byReason: [String: Int]
    }

    struct StreamError: Codable {
        let condition: String
        let message: String
        let line: Int
        let column: Int
        let byteOffset: Int

        init(_ error: XMPPStreamError) {
            condition = error.condition.rawValue
            message = error.message
            line = error.position.line
            column = error.position.column
            byteOffset = error.position.byteOffset
        }
    }

    struct PressureEvent: Encodable {
        let level: String
        let evicted: Int
        let entriesBefore: Int
        let entriesAfter: Int
        let bytesBefore: Int
        let bytesAfter: Int
        let overBudget: Bool
    }

    let storage: String
    let stanzas: Int
    let presenceUpdates: Int
    let ignored: Counts
    let rejected: Counts
    let users: Int
    let retained: Int
    let lost: Int
    let stale: Int
    let lossRate: Double
    let evictions: [String: Int]
    let lostUsers: [String]
    let staleUsers: [String]
    let lostByCause: [String: Int]
    let error: Nullable<StreamError>
    let stanzasPerSecond: Int
    let peakResidentBytes: Nullable<Int>
    let bytes: Int
    let elapsedSeconds: Double
    let storageEntries: Int
    let storageEstimatedBytes: Int
    let pressureEvents: [PressureEvent]
    let notApplicable: [String]
    let notes: [String]

    init(_ outcome: ReplayOutcome, listing limit: Int) {
        let audit = outcome.audit
        let statistics = outcome.statistics
        let storageStatistics = outcome.storage.statistics
        storage = outcome.storageChoice.rawValue
        stanzas = statistics.stanzas
        presenceUpdates = statistics.presenceUpdates
        ignored = Counts(total: statistics.ignoredTotal,
                         byReason: Dictionary(uniqueKeysWithValues: statistics.ignored.map { ($0.key.rawValue, $0.value) }))
        rejected = Counts(total: statistics.rejectedTotal,
                          byReason: Dictionary(uniqueKeysWithValues: statistics.rejected.map { ($0.key.description, $0.value) }))
        users = audit.users
        retained = audit.retained
        lost = audit.lost.count
        stale = audit.stale.count
        lossRate = audit.lossRate
        evictions = Dictionary(uniqueKeysWithValues: audit.evictions.map { ($0.key.rawValue, $0.value) })
        lostUsers = audit.lost.prefix(limit).map(\.rawValue)
        staleUsers = audit.stale.prefix(limit).map(\.rawValue)
        lostByCause = Dictionary(uniqueKeysWithValues: audit.lostByCause.map { ($0.key?.rawValue ?? "unknown", $0.value) })
        error = Nullable(outcome.error.map(StreamError.init))
        let seconds = outcome.elapsed.seconds
        stanzasPerSecond = seconds > 0 ? Int(Double(statistics.stanzas) / seconds) : 0
        peakResidentBytes = Nullable(outcome.peakResidentBytes)
        bytes = statistics.bytes
        elapsedSeconds = seconds
        storageEntries = storageStatistics.entries
        storageEstimatedBytes = storageStatistics.estimatedBytes
        pressureEvents = outcome.pressure.map {
            PressureEvent(level: $0.level.rawValue, evicted: $0.evicted, entriesBefore: $0.entriesBefore, entriesAfter: $0.entriesAfter,
                          bytesBefore: $0.bytesBefore, bytesAfter: $0.bytesAfter, overBudget: $0.overBudget)
        }
        notApplicable = outcome.notApplicable
        notes = outcome.notes
    }
}

/// An optional that encodes as JSON `null` when absent (synthesized `Encodable` would leave the key out): the
/// contract says a field with no value is `null`.
struct Nullable<Wrapped: Encodable>: Encodable {
    let value: Wrapped?

    init(_ value: Wrapped?) { self.value = value }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let value { try container.encode(value) } else { try container.encodeNil() }
    }
}

enum JSONOutput {
    static func print<T: Encodable>(_ value: T) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        FileHandle.standardOutput.write(data)
        FileHandle.standardOutput.write(Data("\n".utf8))
    }
}
