import PresencePressure
import PresenceSource
import PresenceStore
import PresenceWire

extension ServiceStats {
    /// The service's statistics now: the storage's counters, the service's, and the process's memory.
    init(storage: any MemoryStorage, statistics: ServiceStatistics, source: XMPPPresenceSource?) {
        let storageStatistics = storage.statistics
        self.init(
            storage: storage.name, entries: storageStatistics.entries,
            storageEstimatedBytes: storageStatistics.estimatedBytes, lost: storageStatistics.lost,
            removals: Dictionary(uniqueKeysWithValues: storageStatistics.removals.map { ($0.key.rawValue, $0.value) }),
            evictions: Dictionary(
                uniqueKeysWithValues: storageStatistics.evictions.map { ($0.key.rawValue, $0.value) }),
            pressureLevel: statistics.pressureLevel.rawValue,
            pressureEvents: statistics.pressureEvents.map {
                PressureEventReport($0.response, time: $0.time.description, source: $0.source)
            },
            residentBytes: ProcessMemory.residentBytes(), peakResidentBytes: ProcessMemory.peakResidentBytes(),
            feedersConnected: statistics.feedersConnected, connectionsAccepted: statistics.connectionsAccepted,
            stanzasRead: statistics.stanzasRead, updatesApplied: statistics.updatesApplied,
            stanzasIgnored: statistics.stanzasIgnored, presencesRejected: statistics.presencesRejected,
            streamErrors: statistics.streamErrorCount, source: source.map { SourceReport($0.status) })
        pinned = storageStatistics.pinned
        disk = storage.diskTierStatistics.map(DiskReport.init)
    }
}

extension SourceReport {
    init(_ status: XMPPSourceStatus) {
        self.init(
            kind: "xmpp", jid: status.jid, server: status.server, connected: status.connected,
            live: status.connected && status.snapshotComplete, encrypted: status.encrypted,
            connectedSince: status.connectedSince?.description,
            disconnectedSince: status.disconnectedSince?.description,
            connectAttempts: status.connectAttempts, reconnects: status.reconnects, rosterSize: status.rosterSize,
            presencesReceived: status.presencesReceived, markedOffline: status.markedOffline,
            snapshotUnconfirmed: status.snapshotUnconfirmed, partialUsers: status.partialUsers, warning: status.warning,
            lastSnapshotMilliseconds: status.lastSnapshotDuration.map { $0.seconds * 1000 },
            lastError: status.lastError)
        replaced = status.replaced
        resyncs = status.resyncs
        resyncProbed = status.resyncProbed
        resyncCorrected = status.resyncCorrected
        lastResyncMilliseconds = status.lastResyncDuration.map { $0.seconds * 1000 }
        keepAlivePings = status.keepAlivePings
        questionsWaiting = status.questionsWaiting
        questionsInFlight = status.questionsInFlight
        sessionDirectoryAnswers = status.sessionDirectoryAnswers
        sessionDirectoryError = status.sessionDirectoryError
        readLimit = status.readLimit.map {
            ReadLimitReport(
                bytesPerSecond: $0.bytesPerSecond, answersPerSecond: $0.answersPerSecond, waiting: $0.waiting,
                since: $0.since.description, explanation: $0.explanation, likelySetting: $0.likelySetting)
        }
    }
}
