#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// systemd's readiness protocol (`Type=notify`, sd_notify(3)): one datagram such as `READY=1` to the Unix socket
/// named by `NOTIFY_SOCKET`. It lets `systemctl start` return only once the ports are bound, and orders the units
/// that need the service after it. Without `NOTIFY_SOCKET` (not started by systemd) there is nothing to tell.
public struct SystemdNotifier: Sendable {
    /// The socket's path; a leading `@` names an abstract socket.
    public let socketPath: String

    /// The notifier for this process's `NOTIFY_SOCKET`, or nil when it was not started with one.
    public init?(environmentValue: String? = getenv("NOTIFY_SOCKET").map { String(cString: $0) }) {
        guard let environmentValue, !environmentValue.isEmpty else { return nil }
        socketPath = environmentValue
    }

    /// Sends `state` (newline-separated `KEY=value` assignments); false when it could not be delivered, which
    /// never stops the service.
    @discardableResult
    public func notify(_ state: String) -> Bool {
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(socketPath.utf8)
        let abstract = path.first == UInt8(ascii: "@")
        if abstract { path[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.count < capacity else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (index, byte) in path.enumerated() { bytes[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count + (abstract ? 0 : 1))
        let message = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                message.withUnsafeBytes { bytes in
                    sendto(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), socketAddress, length)
                }
            }
        }
        return sent == message.count
    }
}
