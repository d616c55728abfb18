/// One user's answer as the CLI (`presence query --format json`) and the HTTP API (`/v1/presence`) give it.
///
/// A field with no value is encoded as `null`, never left out: scripts read every field of every result.
public struct PresenceQueryResult: Codable, Hashable, Sendable {
    public var jid: String
    /// `available`, `offline` (a known state with its time), `unknown` (never seen) or `lost` (the storage
    /// dropped it).
    public var state: String
    /// `chat`, `away`, `xa` or `dnd`; null for plain available and for users not available.
    public var show: String?
    public var status: String?
    public var priority: Int?
    public var resource: String?
    public var attendance: String?
    /// XEP-0082 UTC time since when this state holds.
    public var since: String?
    /// For `lost`: the eviction cause, when the storage knows it.
    public var cause: String?

    public init(jid: BareJID, stored: StoredPresence) {
        self.jid = jid.rawValue
        state = "unknown"
        switch stored {
        case .present(let presence):
            guard let status = presence.status else { return }
            let shown = status.presence
            if status.isAvailable {
                state = "available"
                show = shown.details.show?.rawValue
                priority = Int(shown.details.priority)
            } else {
                state = "offline"
            }
            self.status = shown.details.status
            resource = shown.resource.isEmpty ? nil : shown.resource
            attendance = shown.details.attendance?.rawValue
            since = shown.updatedAt.description
        case .lost(let evictionCause):
            state = "lost"
            cause = evictionCause?.rawValue
        case .unknown:
            break
        }
    }

    private enum CodingKeys: String, CodingKey {
        case jid, state, show, status, priority, resource, attendance, since, cause
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(jid, forKey: .jid)
        try container.encode(state, forKey: .state)
        try container.encode(show, forKey: .show)
        try container.encode(status, forKey: .status)
        try container.encode(priority, forKey: .priority)
        try container.encode(resource, forKey: .resource)
        try container.encode(attendance, forKey: .attendance)
        try container.encode(since, forKey: .since)
        try container.encode(cause, forKey: .cause)
    }
}

extension PresenceQueryResult {
    /// Appends this result as a JSON object, the same document `JSONEncoder` writes with sorted keys, without
    /// Foundation's encoder: the query API answers tens of thousands of these a second and the encoder was most of
    /// each request's cost.
    public func appendJSON(to output: inout [UInt8]) {
        output.append(UInt8(ascii: "{"))
        var first = true
        func key(_ name: StaticString) {
            if !first { output.append(UInt8(ascii: ",")) }
            first = false
            output.append(UInt8(ascii: "\""))
            output.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            output.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        }
        func string(_ value: String?) {
            guard let value else { return output.append(contentsOf: "null".utf8) }
            JSONText.appendString(value, to: &output)
        }
        key("attendance"); string(attendance)
        key("cause"); string(cause)
        key("jid"); string(jid)
        key("priority"); if let priority { output.append(contentsOf: String(priority).utf8) } else { output.append(contentsOf: "null".utf8) }
        key("resource"); string(resource)
        key("show"); string(show)
        key("since"); string(since)
        key("state"); string(state)
        key("status"); string(status)
        output.append(UInt8(ascii: "}"))
    }
}

/// JSON string literals, escaped as RFC 8259 requires.
public enum JSONText {
    public static func appendString(_ value: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0 ..< 0x20:
                let hex = Array("0123456789abcdef".utf8)
                output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
