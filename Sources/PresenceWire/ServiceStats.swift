import PresenceStore

/// The body of `GET /v1/stats`, and what `presence stats --server` prints.
public struct ServiceStats: Hashable, Sendable, Decodable, JSONDocument {
    public var storage: String
    /// Users the storage holds.
    public var entries: Int
    public var storageEstimatedBytes: Int
    /// Users the storage lost and has not been given again.
    public var lost: Int
    /// Users held whatever the limits because a change stream watches them (the LRU pins them).
    public var pinned: Int = 0
    /// Change streams open now.
    public var eventStreams: Int = 0
    /// Change streams closed because their reader stopped reading for longer than the write timeout.
    public var eventStreamsClosedAsStalled: Int = 0
    /// Removals by cause, evictions and the caller's own.
    public var removals: [String: Int]
    /// Removals the storage decided on its own.
    public var evictions: [String: Int]
    public var pressureLevel: String
    /// The most recent pressure events (up to 1000), with what each cost.
    public var pressureEvents: [PressureEventReport]
    public var residentBytes: Int?
    public var peakResidentBytes: Int?
    public var feedersConnected: Int
    public var connectionsAccepted: Int
    public var stanzasRead: Int
    public var updatesApplied: Int
    public var stanzasIgnored: Int
    public var presencesRejected: Int
    public var streamErrors: Int
    /// The upstream source (an XMPP server), or null when the service only has its feed port.
    public var source: SourceReport?
    /// Refill by probe, or null when the service has no probing source.
    public var probes: ProbeReport?
    /// The disk tier, or null when the storage has none.
    public var disk: DiskReport?

    public init(
        storage: String, entries: Int, storageEstimatedBytes: Int, lost: Int, removals: [String: Int],
        evictions: [String: Int], pressureLevel: String, pressureEvents: [PressureEventReport], residentBytes: Int?,
        peakResidentBytes: Int?, feedersConnected: Int, connectionsAccepted: Int, stanzasRead: Int,
        updatesApplied: Int, stanzasIgnored: Int, presencesRejected: Int, streamErrors: Int,
        source: SourceReport? = nil, probes: ProbeReport? = nil
    ) {
        self.storage = storage
        self.entries = entries
        self.storageEstimatedBytes = storageEstimatedBytes
        self.lost = lost
        self.removals = removals
        self.evictions = evictions
        self.pressureLevel = pressureLevel
        self.pressureEvents = pressureEvents
        self.residentBytes = residentBytes
        self.peakResidentBytes = peakResidentBytes
        self.feedersConnected = feedersConnected
        self.connectionsAccepted = connectionsAccepted
        self.stanzasRead = stanzasRead
        self.updatesApplied = updatesApplied
        self.stanzasIgnored = stanzasIgnored
        self.presencesRejected = presencesRejected
        self.streamErrors = streamErrors
        self.source = source
        self.probes = probes
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("connectionsAccepted"); writer.int(connectionsAccepted)
            writer.key("disk")
            if let disk { disk.write(to: &writer) } else { writer.null() }
            writer.key("entries"); writer.int(entries)
            writer.key("eventStreams"); writer.int(eventStreams)
            writer.key("eventStreamsClosedAsStalled"); writer.int(eventStreamsClosedAsStalled)
            writer.key("evictions"); writer.counts(evictions)
            writer.key("feedersConnected"); writer.int(feedersConnected)
            writer.key("lost"); writer.int(lost)
            writer.key("peakResidentBytes"); writer.int(peakResidentBytes)
            writer.key("pinned"); writer.int(pinned)
            writer.key("presencesRejected"); writer.int(presencesRejected)
            writer.key("pressureEvents")
            writer.array(pressureEvents) { writer, event in event.write(to: &writer) }
            writer.key("pressureLevel"); writer.string(pressureLevel)
            writer.key("probes")
            if let probes { probes.write(to: &writer) } else { writer.null() }
            writer.key("removals"); writer.counts(removals)
            writer.key("residentBytes"); writer.int(residentBytes)
            writer.key("source")
            if let source { source.write(to: &writer) } else { writer.null() }
            writer.key("stanzasIgnored"); writer.int(stanzasIgnored)
            writer.key("stanzasRead"); writer.int(stanzasRead)
            writer.key("storage"); writer.string(storage)
            writer.key("storageEstimatedBytes"); writer.int(storageEstimatedBytes)
            writer.key("streamErrors"); writer.int(streamErrors)
            writer.key("updatesApplied"); writer.int(updatesApplied)
        }
    }
}
