import Foundation

/// A minimal blocking HTTP/1.1 GET client for the CLI's `--server` mode and the tests: one request per
/// connection, `Connection: close`, bodies up to 64 MiB. Enough to talk to this service; not a general client.
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
        host: String, port: Int, path: String, headers: [String: String] = [:], timeout: Duration = .seconds(10)
    ) throws -> Response {
        let descriptor = try connect(host: host, port: port, receiveTimeout: timeout)
        defer { close(descriptor) }
        try sendRequest(
            "GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\nAccept: */*\r\n", headers: headers,
            on: descriptor)
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while data.count < 64 << 20 {
            let count = recv(descriptor, &chunk, chunk.count, 0)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            data.append(contentsOf: chunk[..<count])
        }
        return try parse(data)
    }

    /// A connected TCP socket to `host:port` whose reads wait at most `receiveTimeout`.
    static func connect(host: String, port: Int, receiveTimeout: Duration) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
            throw Failure(description: "cannot resolve \(host)")
        }
        defer { freeaddrinfo(list) }
        let descriptor = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard descriptor >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var interval = timeval(tv_sec: Int(receiveTimeout.components.seconds), tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        guard Foundation.connect(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw Failure(description: "cannot connect to \(host):\(port): \(reason)")
        }
        return descriptor
    }

    /// Sends a request head: `start` (request line and fixed headers, each ending in CRLF), `headers`, a blank line.
    static func sendRequest(_ start: String, headers: [String: String], on descriptor: Int32) throws {
        let extra = headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)\r\n" }.joined()
        let request = Array((start + extra + "\r\n").utf8)
        var sent = 0
        while sent < request.count {
            let written = request[sent...].withUnsafeBytes {
                send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard written > 0 else { throw Failure(description: "send failed") }
            sent += written
        }
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
