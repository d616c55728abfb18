import PresenceWire

/// The report of `presence compare --sweep`: every evicting storage's losses at each value of one limit, and the
/// dictionary, which loses nothing, as the line to beat. Scripts depend on it: fields are added, never renamed or
/// removed.
public struct SweepReport: Hashable, Sendable, Decodable, JSONDocument {
    /// One storage at one value of the limit.
    public struct Point: Hashable, Sendable, Decodable {
        public var value: Int
        public var lost: Int
        public var stale: Int
        public var lossRate: Double
        public var staleRate: Double
        public var evictions: [String: Int]
        public var storageEstimatedBytes: Int

        public init(
            value: Int, lost: Int, stale: Int, lossRate: Double, staleRate: Double, evictions: [String: Int],
            storageEstimatedBytes: Int
        ) {
            self.value = value
            self.lost = lost
            self.stale = stale
            self.lossRate = lossRate
            self.staleRate = staleRate
            self.evictions = evictions
            self.storageEstimatedBytes = storageEstimatedBytes
        }
    }

    /// One evicting storage across the sweep.
    public struct Series: Hashable, Sendable, Decodable {
        public var storage: String
        public var points: [Point]

        public init(storage: String, points: [Point]) {
            self.storage = storage
            self.points = points
        }
    }

    /// `count-limit`, `cost-limit` or `memory-budget`.
    public var parameter: String
    /// `users` or `bytes`.
    public var unit: String
    public var values: [Int]
    public var users: Int
    public var presenceUpdates: Int
    /// What keeping everyone costs: the dictionary's estimated bytes, with no loss.
    public var dictionaryEstimatedBytes: Int
    public var dictionaryLost: Int
    public var series: [Series]

    public init(
        parameter: String, unit: String, values: [Int], users: Int, presenceUpdates: Int,
        dictionaryEstimatedBytes: Int, dictionaryLost: Int, series: [Series]
    ) {
        self.parameter = parameter
        self.unit = unit
        self.values = values
        self.users = users
        self.presenceUpdates = presenceUpdates
        self.dictionaryEstimatedBytes = dictionaryEstimatedBytes
        self.dictionaryLost = dictionaryLost
        self.series = series
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("dictionaryEstimatedBytes"); writer.int(dictionaryEstimatedBytes)
            writer.key("dictionaryLost"); writer.int(dictionaryLost)
            writer.key("parameter"); writer.string(parameter)
            writer.key("presenceUpdates"); writer.int(presenceUpdates)
            writer.key("series")
            writer.array(series) { writer, series in
                writer.object { writer in
                    writer.key("points")
                    writer.array(series.points) { writer, point in
                        writer.object { writer in
                            writer.key("evictions"); writer.counts(point.evictions)
                            writer.key("lossRate"); writer.double(point.lossRate)
                            writer.key("lost"); writer.int(point.lost)
                            writer.key("stale"); writer.int(point.stale)
                            writer.key("staleRate"); writer.double(point.staleRate)
                            writer.key("storageEstimatedBytes"); writer.int(point.storageEstimatedBytes)
                            writer.key("value"); writer.int(point.value)
                        }
                    }
                    writer.key("storage"); writer.string(series.storage)
                }
            }
            writer.key("unit"); writer.string(unit)
            writer.key("users"); writer.int(users)
            writer.key("values")
            writer.array(values) { writer, value in writer.int(value) }
        }
    }
}
