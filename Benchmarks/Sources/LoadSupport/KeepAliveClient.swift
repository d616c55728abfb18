import Foundation

/// One keep-alive HTTP/1.1 connection on a blocking socket, as a dashboard's poller keeps one: sends a GET and
/// reads exactly one response (Content-Length framed). Cheap enough that the load measures the service.
public final class KeepAliveClient {
    public struct Response {
        public let status: Int
        public let body: ArraySlice<UInt8>
    }

    private let descriptor: Int32
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    private var pending: [UInt8] = []

    /// - Parameter receiveTimeout: how long one read may wait before the request counts as failed.
    public init(port: Int, receiveTimeout: Duration = .seconds(10)) throws {
        descriptor = try LoopbackTCP.connect(port: port, receiveTimeout: receiveTimeout)
    }

    deinit { close(descriptor) }

    /// The response to `GET path`, or nil when the connection failed or closed before it was complete.
    public func get(_ path: String) -> Response? {
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        guard (try? request.withUnsafeBytes({ try LoopbackTCP.sendAll(descriptor, $0) })) != nil else { return nil }
        while true {
            if let end = headerEnd() {
                let head = String(decoding: pending[..<end], as: UTF8.self).lowercased()
                let length =
                    head.components(separatedBy: "\r\n").first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) } ?? 0
                let total = end + 4 + length
                while pending.count < total { guard read() else { return nil } }
                let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? -1
                let body = pending[(end + 4) ..< total]
                pending.removeFirst(total)
                return Response(status: status, body: body)
            }
            guard read() else { return nil }
        }
    }

    private func headerEnd() -> Int? {
        guard pending.count >= 4 else { return nil }
        for index in 0 ... pending.count - 4
        where pending[index] == 13 && pending[index + 1] == 10 && pending[index + 2] == 13 && pending[index + 3] == 10 {
            return index
        }
        return nil
    }

    private func read() -> Bool {
        let count = recv(descriptor, &buffer, buffer.count, 0)
        guard count > 0 else { return false }
        pending.append(contentsOf: buffer[..<count])
        return true
    }
}
