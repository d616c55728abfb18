/// The shared secret feeders prove with the XEP-0114 component handshake (`--feed-secret-file`).
///
/// Its own type so that it never reaches a log: its description and mirror are redacted, and a configuration
/// printed whole (swift-service-lifecycle logs its services at debug level) shows `<redacted>`.
public struct FeedSecret: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    let bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
