import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// TLS to a server with swift-nio-ssl, behind the blocking ``ByteConnection`` interface the CLI's clients use.
///
/// The server's certificate is verified, always: against the system's trust roots, or only against `caFile`'s
/// certificates when given, and for `host` (a name or an IP address). A certificate that does not verify fails
/// the first `send` or `receive` with the handshake's reason.
public final class TLSConnection: ByteConnection {
    private let channel: any Channel
    private let inbox: Inbox
    private let receiveTimeout: Duration

    public init(host: String, port: Int, caFile: String?, receiveTimeout: Duration) throws {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        if let caFile { configuration.trustRoots = .file(caFile) }
        let context = try NIOSSLContext(configuration: configuration)
        // SNI and name checks take a host name; an IP address is checked against the certificate's IP entries.
        let isAddress = (try? SocketAddress(ipAddress: host, port: 0)) != nil
        let inbox = Inbox()
        self.inbox = inbox
        self.receiveTimeout = receiveTimeout
        do {
            channel = try ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.seconds(10))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let handler = try NIOSSLClientHandler(context: context, serverHostname: isAddress ? nil : host)
                        try channel.pipeline.syncOperations.addHandler(handler)
                        try channel.pipeline.syncOperations.addHandler(inbox)
                    }
                }
                .connect(host: host, port: port).wait()
        } catch {
            throw LoopbackHTTPClient.Failure(description: "cannot connect to \(host):\(port): \(error)")
        }
    }

    deinit { channel.close(promise: nil) }

    public func send(_ bytes: [UInt8]) throws {
        do {
            try channel.writeAndFlush(ByteBuffer(bytes: bytes)).wait()
        } catch {
            throw LoopbackHTTPClient.Failure(description: inbox.failure.map { "TLS: \($0)" } ?? "send failed: \(error)")
        }
    }

    public func receive(into buffer: inout [UInt8]) throws -> Bool {
        try inbox.take(into: &buffer, timeout: receiveTimeout)
    }

    public func shutdown() { channel.close(promise: nil) }

    /// What arrived, for the blocked reader.
    ///
    /// `@unchecked Sendable`, proven by its lock: `bytes`, `closed` and `error` are read and written only between
    /// `condition.lock()` and `condition.unlock()`; `condition` is thread-safe. NIO calls the handler methods on
    /// the channel's event loop, the reader calls `take` on its own thread.
    final class Inbox: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer

        private let condition = NSCondition()
        private var bytes: [UInt8] = []
        private var closed = false
        private var error: (any Error)?

        var failure: (any Error)? {
            condition.lock()
            defer { condition.unlock() }
            return error
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            let arrived = buffer.readBytes(length: buffer.readableBytes) ?? []
            condition.lock()
            bytes += arrived
            condition.broadcast()
            condition.unlock()
        }

        func channelInactive(context: ChannelHandlerContext) {
            condition.lock()
            closed = true
            condition.broadcast()
            condition.unlock()
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            condition.lock()
            if self.error == nil { self.error = error }
            condition.broadcast()
            condition.unlock()
            context.close(promise: nil)
        }

        /// Moves what arrived into `buffer`, waiting up to `timeout` for something; false once closed and empty.
        func take(into buffer: inout [UInt8], timeout: Duration) throws -> Bool {
            let deadline = Date().addingTimeInterval(
                Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
            condition.lock()
            defer { condition.unlock() }
            while bytes.isEmpty && !closed && error == nil {
                guard condition.wait(until: deadline) else {
                    throw LoopbackHTTPClient.Failure(description: "nothing arrived within the idle timeout")
                }
            }
            if !bytes.isEmpty {
                buffer += bytes
                bytes.removeAll()
                return true
            }
            if let error { throw LoopbackHTTPClient.Failure(description: "TLS: \(error)") }
            return false
        }
    }
}
