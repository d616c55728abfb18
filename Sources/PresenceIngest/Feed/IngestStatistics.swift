import PresenceModel

/// Counts of what a presence feed contained, by outcome.
public struct IngestStatistics: Hashable, Sendable {
    /// Top-level elements read.
    public var stanzas = 0
    /// Presence updates applied.
    public var presenceUpdates = 0
    /// Well-formed stanzas that change no status, by reason.
    public var ignored: [IgnoredStanzaReason: Int] = [:]
    /// Presences refused, by reason.
    public var rejected: [RejectedPresenceReason: Int] = [:]
    /// Input bytes read.
    public var bytes = 0

    public init() {}

    /// Adds the outcomes (updates, ignored, rejected) counted elsewhere, where the stanzas were decoded; stanzas and
    /// bytes are counted where they were parsed.
    public mutating func addOutcomes(of other: IngestStatistics) {
        presenceUpdates += other.presenceUpdates
        ignored.merge(other.ignored, uniquingKeysWith: +)
        rejected.merge(other.rejected, uniquingKeysWith: +)
    }

    public var ignoredTotal: Int { ignored.values.reduce(0, +) }
    public var rejectedTotal: Int { rejected.values.reduce(0, +) }
}
