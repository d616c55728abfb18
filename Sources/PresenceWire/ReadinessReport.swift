/// `GET /readyz`: whether this replica serves a complete, live picture, and why (or why not).
public struct ReadinessReport: Hashable, Sendable, Decodable, JSONDocument {
    public var ready: Bool
    public var reason: String
    /// This process's instance: the prefix of its change streams' event ids, so one can tell which replica
    /// answered through a balancer.
    public var instance: String

    public init(ready: Bool, reason: String, instance: String) {
        self.ready = ready
        self.reason = reason
        self.instance = instance
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("instance"); writer.string(instance)
            writer.key("ready"); writer.bool(ready)
            writer.key("reason"); writer.string(reason)
        }
    }
}
