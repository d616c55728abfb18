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
        defer { close(descriptor) }
        var interval = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        guard connect(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            throw Failure(description: "cannot connect to \(host):\(port): \(String(cString: strerror(errno)))")
        }
        let extra = headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)\r\n" }.joined()
        let request = Array(
            "GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\nAccept: */*\r\n\(extra)\r\n".utf8)
        var sent = 0
        while sent < request.count {
            let written = request[sent...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
            guard written > 0 else { throw Failure(description: "send failed") }
            sent += written
        }
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

    static func parse(_ data: [UInt8]) throws -> Response {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let headerEnd = data.indices.first(where: { data[$0...].starts(with: separator) }) else {
            throw Failure(description: "incomplete HTTP response")
        }
        let head = String(decoding: data[..<headerEnd], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = head.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw Failure(description: "bad status line")
        }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
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
