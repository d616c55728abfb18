import XMPPStream

/// What went wrong, as every document reports it: `{"condition", "message", "line", "column", "byteOffset"}`.
///
/// A stream error has its position (line and column 1-based, byte offset 0-based); an error about a request
/// (an invalid JID, a missing parameter) has none, and those three fields are `null`.
public struct ErrorReport: Hashable, Sendable, Decodable, JSONDocument {
    /// A stream-error condition (`not-well-formed`, `restricted-xml`, `policy-violation`, ...), or for a request
    /// `bad-request` or `jid-malformed`.
    public var condition: String
    public var message: String
    public var line: Int?
    public var column: Int?
    public var byteOffset: Int?

    public init(condition: String, message: String, line: Int? = nil, column: Int? = nil, byteOffset: Int? = nil) {
        self.condition = condition
        self.message = message
        self.line = line
        self.column = column
        self.byteOffset = byteOffset
    }

    public init(_ error: XMPPStreamError) {
        self.init(
            condition: error.condition.rawValue, message: error.message, line: error.position.line,
            column: error.position.column, byteOffset: error.position.byteOffset)
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("byteOffset"); writer.int(byteOffset)
            writer.key("column"); writer.int(column)
            writer.key("condition"); writer.string(condition)
            writer.key("line"); writer.int(line)
            writer.key("message"); writer.string(message)
        }
    }
}

/// The body of an HTTP error answer: `{"error": {...}}`.
public struct ErrorDocument: Hashable, Sendable, Decodable, JSONDocument {
    public var error: ErrorReport

    public init(_ error: ErrorReport) { self.error = error }

    public func write(to writer: inout JSONWriter) {
        writer.object { writer in
            writer.key("error"); error.write(to: &writer)
        }
    }
}
