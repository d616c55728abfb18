import Foundation

/// A minimal blocking HTTP/1.1 GET client for the CLI's `--server` mode and the tests: one request per
/// connection, `Connection: close`, bodies up to 64 MiB, plain or over TLS (``ClientTransport``). Enough to talk
/// to this service; not a general client.
public enum LoopbackHTTPClient {
    public struct Response: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: [UInt8]
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Gets `path` (with its query) from `host:port`, with any extra request `headers`.
    public static func get(
        host: String, port: Int, path: String, headers: [String: String] = [:], transport: ClientTransport = .plain,
        timeout: Duration = .seconds(10)
    ) throws -> Response {
        let connection = try transport.connect(host: host, port: port, receiveTimeout: timeout)
        defer { connection.shutdown() }
        try sendRequest(
            "GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\nAccept: */*\r\n", headers: headers,
            on: connection)
        var data: [UInt8] = []
        while data.count < 64 << 20 {
            // A read that times out after part of the answer ends it, as the end of the stream does.
            guard (try? connection.receive(into: &data)) == true else { break }
        }
        return try parse(data)
    }

    /// Sends a request head: `start` (request line and fixed headers, each ending in CRLF), `headers`, a blank line.
    static func sendRequest(_ start: String, headers: [String: String], on connection: any ByteConnection) throws {
        let extra = headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)\r\n" }.joined()
        try connection.send(Array((start + extra + "\r\n").utf8))
    }

    /// The status and headers (names lowercased) of a response head, without its final blank line.
    static func parseHead(_ head: ArraySlice<UInt8>) throws -> (status: Int, headers: [String: String]) {
        let lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw Failure(description: "bad status line")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        return (status, headers)
    }

    static func parse(_ data: [UInt8]) throws -> Response {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let headerEnd = data.indices.first(where: { data[$0...].starts(with: separator) }) else {
            throw Failure(description: "incomplete HTTP response")
        }
        let (status, headers) = try parseHead(data[..<headerEnd])
        var body = Array(data[(headerEnd + 4)...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" { body = dechunk(body) }
        return Response(status: status, headers: headers, body: body)
    }

    static func dechunk(_ data: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        var index = 0
        while index < data.count {
            guard let lineEnd = data[index...].firstIndex(of: 13) else { break }
            let sizeText = String(decoding: data[index ..< lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText, radix: 16), size > 0 else { break }
            let start = lineEnd + 2
            output.append(contentsOf: data[start ..< min(start + size, data.count)])
            index = start + size + 2
        }
        return output
    }
}
