/// A read rate limit the XMPP server holds the watcher's questions back with, in `/v1/stats` (`source.readLimit`):
/// how fast it reads them, how many wait, and the settings that likely cause it.
public struct ReadLimitReport: Hashable, Sendable, Decodable, JSONDocument {
    /// Question bytes the server answers a second.
    public var bytesPerSecond: Int
    /// Questions it answers a second.
    public var answersPerSecond: Double
    /// Questions waiting to be sent.
    public var waiting: Int
    /// XEP-0082 UTC time the limit was first seen in this session.
    public var since: String
    /// What is happening and the settings that likely cause it.
    public var explanation: String
    /// The shipped limit whose rate this is; nil for any other rate.
    public var likelySetting: String?

    public init(
        bytesPerSecond: Int, answersPerSecond: Double, waiting: Int, since: String, explanation: String,
        likelySetting: String?
    ) {
        self.likelySetting = likelySetting
        self.bytesPerSecond = bytesPerSecond
        self.answersPerSecond = answersPerSecond
        self.waiting = waiting
        self.since = since
        self.explanation = explanation
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("answersPerSecond"); writer.double(answersPerSecond)
            writer.key("bytesPerSecond"); writer.int(bytesPerSecond)
            writer.key("explanation"); writer.string(explanation)
            writer.key("likelySetting"); writer.string(likelySetting)
            writer.key("since"); writer.string(since)
            writer.key("waiting"); writer.int(waiting)
        }
    }
}
