import NIOConcurrencyHelpers
import NIOCore

/// Records when bytes last arrived from the server, as they come off the wire (not when the session's reader gets
/// to them), so that the keep-alive judges the connection and not the reader's pace.
final class ActivityHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    let lastReceived: NIOLockedValueBox<NIODeadline>

    init(lastReceived: NIOLockedValueBox<NIODeadline>) {
        self.lastReceived = lastReceived
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastReceived.withLockedValue { $0 = .now() }
        context.fireChannelRead(data)
    }
}
