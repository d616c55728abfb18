import PresenceStore

/// The body of `GET /v1/stats`, and what `presence stats --server` prints.
public struct ServiceStats: Codable, Sendable {
    public struct Pressure: Codable, Sendable {
        public var time: String
        public var source: String
        public var level: String
        public var evicted: Int
        public var entriesBefore: Int
        public var entriesAfter: Int
        public var bytesBefore: Int
        public var bytesAfter: Int
        public var overBudget: Bool
    }

    public var storage: String
    /// Users the storage holds.
    public var entries: Int
    public var storageEstimatedBytes: Int
    /// Users the storage lost and has not been given again.
    public var lost: Int
    /// Removals by cause, evictions and the caller's own.
    public var removals: [String: Int]
    /// Removals the storage decided on its own.
    public var evictions: [String: Int]
    public var pressureLevel: String
    /// The most recent pressure events (up to 1000), with what each cost.
    public var pressureEvents: [Pressure]
    public var residentBytes: Int?
    public var peakResidentBytes: Int?
    public var feedersConnected: Int
    public var connectionsAccepted: Int
    public var stanzasRead: Int
    public var updatesApplied: Int
    public var stanzasIgnored: Int
    public var presencesRejected: Int
    public var streamErrors: Int

    init(storage: any MemoryStorage, statistics: ServiceStatistics) {
        let storageStatistics = storage.statistics
        self.storage = storage.name
        entries = storageStatistics.entries
        storageEstimatedBytes = storageStatistics.estimatedBytes
        lost = storageStatistics.lost
        removals = Dictionary(uniqueKeysWithValues: storageStatistics.removals.map { ($0.key.rawValue, $0.value) })
        evictions = Dictionary(uniqueKeysWithValues: storageStatistics.evictions.map { ($0.key.rawValue, $0.value) })
        pressureLevel = statistics.pressureLevel.rawValue
        pressureEvents = statistics.pressureEvents.map {
            Pressure(time: $0.time.description, source: $0.source, level: $0.response.level.rawValue, evicted: $0.response.evicted,
                     entriesBefore: $0.response.entriesBefore, entriesAfter: $0.response.entriesAfter,
                     bytesBefore: $0.response.bytesBefore, bytesAfter: $0.response.bytesAfter, overBudget: $0.response.overBudget)
        }
        residentBytes = ResidentMemoryBudget.residentBytes()
        peakResidentBytes = ResidentMemoryBudget.peakResidentBytes()
        feedersConnected = statistics.feedersConnected
        connectionsAccepted = statistics.connectionsAccepted
        stanzasRead = statistics.stanzasRead
        updatesApplied = statistics.updatesApplied
        stanzasIgnored = statistics.stanzasIgnored
        presencesRejected = statistics.presencesRejected
        streamErrors = statistics.streamErrorCount
    }
}

/// The body of `GET /v1/presence`: the same shape as `presence query --format json`.
public struct PresenceResults: Codable, Sendable {
    public var results: [PresenceQueryResult]
    /// Always null here; present so that the CLI's and the API's documents are interchangeable.
    public var error: String?

    public init(results: [PresenceQueryResult]) {
        self.results = results
        error = nil
    }

    private enum CodingKeys: String, CodingKey { case results, error }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(results, forKey: .results)
        try container.encode(error, forKey: .error)
    }
}
