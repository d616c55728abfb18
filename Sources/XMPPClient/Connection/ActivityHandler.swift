import PresenceModel
import NIOCore

/// Records when bytes last arrived from the server, as they come off the wire (not when the session's reader gets
/// to them), so that the keep-alive judges the connection and not the reader's pace; on the event loop's clock,
/// which ``KeepAliveMonitor`` reads too.
final class ActivityHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    let lastReceived: Locked<NIODeadline>

    init(lastReceived: Locked<NIODeadline>) {
        self.lastReceived = lastReceived
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastReceived.withLock { $0 = context.eventLoop.now }
        context.fireChannelRead(data)
    }
}
