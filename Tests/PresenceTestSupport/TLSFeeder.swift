import NIOCore
import NIOPosix
import NIOSSL

/// A feeder on a feed port that speaks TLS (`serve --tls-cert`): the feed is an XMPP stream, not HTTP, so it is
/// raw bytes over swift-nio-ssl, with the server's certificate verified as `transport` says.
package final class TLSFeeder: Sendable {
    private let channel: any Channel

    /// Connects to `host:port` and starts the handshake; a certificate that does not verify fails ``send(_:)``.
    package init(host: String, port: Int, transport: TestTransport) async throws {
        let context = try NIOSSLContext(configuration: transport.tls ?? .makeClientConfiguration())
        channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(TimeAmount(TestDeadline.read))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        NIOSSLClientHandler(context: context, serverHostname: host))
                }
            }
            .connect(host: host, port: port).get()
    }

    /// Writes every byte, or throws.
    package func send(_ bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(ByteBuffer(bytes: bytes)).get()
    }

    /// Closes the connection.
    package func close() { channel.close(promise: nil) }

    deinit { channel.close(promise: nil) }
}
