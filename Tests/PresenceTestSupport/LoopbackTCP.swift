import Foundation

/// Plain blocking TCP on the loopback address, for the tests whose subject is the bytes on the wire: feeders
/// writing an XMPP stream to the service's feed port, HTTP requests that no HTTP client would send (pipelined,
/// HTTP/1.0, malformed, stalled halfway), and ports that are taken or refuse connections. Every ordinary HTTP
/// request goes through ``TestHTTP`` instead.
package enum LoopbackTCP {
    package struct Failure: Error, CustomStringConvertible {
        package var description: String

        package init(description: String) { self.description = description }
    }

    /// A socket connected to `127.0.0.1:port`, with `TCP_NODELAY`, a receive timeout and, when given, a receive
    /// buffer of about `receiveBufferBytes` (set before connecting, so that the window the peer sees is that small).
    package static func connect(
        port: Int, receiveTimeout: Duration = TestDeadline.read, receiveBufferBytes: Int? = nil
    ) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        if var size = receiveBufferBytes.map(Int32.init) {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Foundation.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw Failure(description: "cannot connect to 127.0.0.1:\(port): \(reason)")
        }
        var one: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var timeout = timeval(tv_sec: Int(receiveTimeout.components.seconds), tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return descriptor
    }

    /// A socket bound to a port the kernel picks on `127.0.0.1`, listening when asked, and that port. While the
    /// caller keeps it open nobody else is given the port; bound without listening, connections to it are refused.
    package static func boundSocket(listening: Bool) -> (descriptor: Int32, port: Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
                bind(descriptor, pointer, length)
                if listening { listen(descriptor, 1) }
                return getsockname(descriptor, pointer, &length)
            }
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// Writes every byte, or throws.
    package static func sendAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) throws {
        var sent = 0
        while sent < bytes.count {
            let written = send(descriptor, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
            guard written > 0 else { throw Failure(description: "send failed: \(String(cString: strerror(errno)))") }
            sent += written
        }
    }
}

extension LoopbackTCP {
    /// Sends `request` (one or more HTTP/1.1 requests, the last with `Connection: close`) and returns everything the
    /// server wrote until it closed the connection.
    package static func exchange(_ request: String, port: Int) throws -> String {
        let descriptor = try connect(port: port)
        defer { close(descriptor) }
        try Array(request.utf8).withUnsafeBytes { try sendAll(descriptor, $0) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            received += buffer[..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }
}
