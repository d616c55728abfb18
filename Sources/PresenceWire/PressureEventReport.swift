import PresenceStore

/// One memory-pressure event a storage was given, and what it cost it: in replay reports and in the service's
/// statistics alike. `time` and `source` are known to the service; a replay's scripted events have neither.
public struct PressureEventReport: Hashable, Sendable, Decodable, JSONDocument {
    public var time: String?
    public var source: String?
    public var level: MemoryPressure
    public var evicted: Int
    public var entriesBefore: Int
    public var entriesAfter: Int
    public var bytesBefore: Int
    public var bytesAfter: Int
    public var overBudget: Bool

    public init(_ response: PressureResponse, time: String? = nil, source: String? = nil) {
        self.time = time
        self.source = source
        level = response.level
        evicted = response.evicted
        entriesBefore = response.entriesBefore
        entriesAfter = response.entriesAfter
        bytesBefore = response.bytesBefore
        bytesAfter = response.bytesAfter
        overBudget = response.overBudget
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("bytesAfter"); writer.int(bytesAfter)
            writer.key("bytesBefore"); writer.int(bytesBefore)
            writer.key("entriesAfter"); writer.int(entriesAfter)
            writer.key("entriesBefore"); writer.int(entriesBefore)
            writer.key("evicted"); writer.int(evicted)
            writer.key("level"); writer.string(level.rawValue)
            writer.key("overBudget"); writer.bool(overBudget)
            writer.key("source"); writer.string(source)
            writer.key("time"); writer.string(time)
        }
    }
}

extension MemoryPressure: Decodable {}
