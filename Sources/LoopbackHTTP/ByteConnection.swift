import Foundation

/// A blocking byte stream to a server: a plain TCP socket (``SocketConnection``) or TLS over one
/// (``TLSConnection``). The HTTP client and the event-stream reader speak HTTP over either.
public protocol ByteConnection: AnyObject {
    /// Writes every byte, or throws.
    func send(_ bytes: [UInt8]) throws
    /// Appends what arrives next, waiting for it up to the connection's receive timeout; false once the peer
    /// closed. Throws when nothing arrived in time or the connection failed.
    func receive(into buffer: inout [UInt8]) throws -> Bool
    /// Ends both directions; a blocked `receive` returns.
    func shutdown()
}

/// How to reach a server: plain TCP, or TLS that verifies the server's certificate (against the system's trust
/// roots, or only `caFile`'s certificates when given) for `host`.
public struct ClientTransport: Sendable {
    public var tls: Bool
    /// PEM certificates to trust instead of the system's; only with `tls`.
    public var caFile: String?

    public static let plain = ClientTransport(tls: false, caFile: nil)

    public init(tls: Bool, caFile: String? = nil) {
        self.tls = tls
        self.caFile = caFile
    }

    /// A connection to `host:port` whose reads wait at most `receiveTimeout`.
    public func connect(host: String, port: Int, receiveTimeout: Duration) throws -> any ByteConnection {
        guard tls else { return try SocketConnection(host: host, port: port, receiveTimeout: receiveTimeout) }
        return try TLSConnection(host: host, port: port, caFile: caFile, receiveTimeout: receiveTimeout)
    }
}

/// A plain TCP connection.
public final class SocketConnection: ByteConnection {
    let descriptor: Int32

    /// Connects to `host:port` (resolved with `getaddrinfo`); reads wait at most `receiveTimeout`.
    public init(host: String, port: Int, receiveTimeout: Duration) throws {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
            throw LoopbackHTTPClient.Failure(description: "cannot resolve \(host)")
        }
        defer { freeaddrinfo(list) }
        let descriptor = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard descriptor >= 0 else {
            throw LoopbackHTTPClient.Failure(description: "socket: \(String(cString: strerror(errno)))")
        }
        var interval = timeval(tv_sec: Int(receiveTimeout.components.seconds), tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        guard Foundation.connect(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw LoopbackHTTPClient.Failure(description: "cannot connect to \(host):\(port): \(reason)")
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    public func send(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try LoopbackTCP.sendAll(descriptor, $0) }
    }

    public func receive(into buffer: inout [UInt8]) throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = recv(descriptor, &chunk, chunk.count, 0)
            if count < 0 && errno == EINTR { continue }
            if count < 0 {
                throw LoopbackHTTPClient.Failure(
                    description: errno == EAGAIN || errno == EWOULDBLOCK
                        ? "nothing arrived within the idle timeout" : String(cString: strerror(errno)))
            }
            guard count > 0 else { return false }
            buffer.append(contentsOf: chunk[..<count])
            return true
        }
    }

    public func shutdown() { Foundation.shutdown(descriptor, Int32(SHUT_RDWR)) }
}
