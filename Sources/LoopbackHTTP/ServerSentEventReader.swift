import Foundation

/// A blocking reader of a Server-Sent Events stream (`text/event-stream`) from a service on this machine or
/// another: `presence watch` and the tests. Handles chunked transfer encoding and comment lines; one connection
/// per reader.
public final class ServerSentEventReader {
    /// One event: its `id:`, `event:` name (`message` when none) and `data:` lines joined by newlines.
    public struct Event: Sendable, Equatable {
        public var id: String?
        public var name: String
        public var data: String
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The status and headers of the response.
    public let status: Int
    public let headers: [String: String]
    private let connection: any ByteConnection
    private var raw: [UInt8] = []
    private var rawIndex = 0
    private var body: [UInt8] = []
    private var chunked: Bool
    /// Bytes left in the current chunk; nil when a chunk-size line comes next.
    private var chunkRemaining: Int?
    /// Bytes of a `Content-Length` body not yet moved to `body`; nil for a chunked body or one that ends when the
    /// connection closes. An error answer on a kept-alive connection ends here, not at an idle timeout.
    private var lengthRemaining: Int?
    private var ended = false

    /// Connects and sends `GET path` with `Accept: text/event-stream` (and `Last-Event-ID` when given, and any
    /// other `headers`). A read waits at most `idleTimeout` (longer than the service's heartbeat).
    public init(
        host: String, port: Int, path: String, lastEventID: String? = nil, headers: [String: String] = [:],
        transport: ClientTransport = .plain, idleTimeout: Duration = .seconds(60)
    ) throws {
        // Closed when released, whichever way this initialiser ends.
        let connection = try transport.connect(host: host, port: port, receiveTimeout: idleTimeout)
        try LoopbackHTTPClient.sendRequest(
            "GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nAccept: text/event-stream\r\n",
            headers: headers.merging(lastEventID.map { ["Last-Event-ID": $0] } ?? [:]) { $1 }, on: connection)
        // The head: status line and headers.
        var raw: [UInt8] = []
        let separator: [UInt8] = [13, 10, 13, 10]
        var headerEnd: Int?
        var scanned = 0
        while headerEnd == nil {
            guard raw.count < 64 * 1024 else { throw Failure(description: "response headers too long") }
            guard try connection.receive(into: &raw) else {
                throw Failure(description: "the service closed the connection before answering")
            }
            headerEnd = raw.indices.dropFirst(max(0, scanned - 3)).first { raw[$0...].starts(with: separator) }
            scanned = raw.count
        }
        let (status, headers) = try LoopbackHTTPClient.parseHead(raw[..<headerEnd!])
        self.connection = connection
        self.status = status
        self.headers = headers
        self.raw = raw
        chunked = headers["transfer-encoding"]?.lowercased() == "chunked"
        if !chunked, let length = headers["content-length"] {
            guard let count = Int(length.trimmingCharacters(in: .whitespaces)), count >= 0 else {
                throw Failure(description: "bad Content-Length '\(length)'")
            }
            lengthRemaining = count
        }
        rawIndex = headerEnd! + 4
    }

    deinit { connection.shutdown() }

    /// Closes the connection now (the reader can still be released later).
    public func close() { connection.shutdown() }

    /// The whole body of a response that is not an event stream (an error document).
    public func remainingBody() throws -> [UInt8] {
        while try fill() {}
        defer { body = [] }
        return body
    }

    /// The next event, skipping comments and `retry:` lines; nil when the service ends the stream. Throws when
    /// the connection fails or stays silent past the idle timeout.
    public func next() throws -> Event? {
        while true {
            if let event = takeEvent() {
                if event.isEmpty { continue }
                return event.value
            }
            guard try fill() else {
                return nil
            }
        }
    }

    /// One block up to a blank line, parsed; `isEmpty` for a block with no data (a comment, `retry:`).
    private func takeEvent() -> (value: Event?, isEmpty: Bool)? {
        guard let end = body.indices.first(where: { body[$0] == 10 && $0 + 1 < body.count && body[$0 + 1] == 10 })
        else { return nil }
        let block = String(decoding: body[..<end], as: UTF8.self)
        body.removeFirst(end + 2)
        var id: String?
        var name = "message"
        var data: [String] = []
        for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(":") { continue }
            let field: Substring
            var value: Substring = ""
            if let colon = line.firstIndex(of: ":") {
                field = line[..<colon]
                value = line[line.index(after: colon)...]
                if value.hasPrefix(" ") { value = value.dropFirst() }
            } else {
                field = line
            }
            switch field {
            case "id": id = String(value)
            case "event": name = String(value)
            case "data": data.append(String(value))
            default: break
            }
        }
        guard !data.isEmpty else { return (nil, true) }
        return (Event(id: id, name: name, data: data.joined(separator: "\n")), false)
    }

    /// Moves more body bytes in, decoding chunks; false at the end of the body.
    private func fill() throws -> Bool {
        guard !ended else { return false }
        while true {
            if lengthRemaining == 0 {
                ended = true
                return false
            }
            if rawIndex < raw.count {
                if !chunked {
                    let take = min(raw.count - rawIndex, lengthRemaining ?? .max)
                    body.append(contentsOf: raw[rawIndex ..< rawIndex + take])
                    lengthRemaining = lengthRemaining.map { $0 - take }
                    raw.removeAll(keepingCapacity: true)
                    rawIndex = 0
                    return true
                }
                if let remaining = chunkRemaining {
                    if remaining == 0 {
                        // The CRLF after a chunk's data.
                        guard raw.count - rawIndex >= 2 else { return try receiveMore() }
                        rawIndex += 2
                        chunkRemaining = nil
                        continue
                    }
                    let take = min(remaining, raw.count - rawIndex)
                    body.append(contentsOf: raw[rawIndex ..< rawIndex + take])
                    rawIndex += take
                    chunkRemaining = remaining - take
                    compact()
                    return true
                }
                guard let lineEnd = raw[rawIndex...].firstIndex(of: 10) else { return try receiveMore() }
                let sizeText =
                    String(decoding: raw[rawIndex ..< lineEnd], as: UTF8.self)
                    .trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ";").first ?? ""
                guard let size = Int(sizeText, radix: 16) else { throw Failure(description: "bad chunk size") }
                rawIndex = lineEnd + 1
                if size == 0 {
                    ended = true
                    return false
                }
                chunkRemaining = size
                continue
            }
            guard try receiveMore() else { return false }
        }
    }

    private func receiveMore() throws -> Bool {
        compact()
        guard try connection.receive(into: &raw) else {
            ended = true
            return false
        }
        return true
    }

    private func compact() {
        if rawIndex > 0 && rawIndex == raw.count {
            raw.removeAll(keepingCapacity: true)
            rawIndex = 0
        } else if rawIndex > 64 * 1024 {
            raw.removeFirst(rawIndex)
            rawIndex = 0
        }
    }
}
