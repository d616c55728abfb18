import NIOCore
import NIOHTTP1

/// Closes a connection whose next request head has not fully arrived within a deadline: from the connection's
/// start, and from the end of each response on a connection kept alive.
///
/// A read-idle timeout does not stop a client that sends its headers one byte a second (each byte resets it); a
/// deadline for the whole head does. It sits right after HTTP decoding, sees each complete head (`.head`) and
/// each response's end, and is silent while a request is being answered, however long a change stream runs.
final class RequestHeadTimeoutHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?
    /// Requests whose head arrived and whose response has not ended (pipelining can make it more than one).
    private var inFlight = 0

    init(timeout: Duration) {
        self.timeout = .nanoseconds(
            Int64(timeout.components.seconds) * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) {
            inFlight += 1
            deadline?.cancel()
            deadline = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            inFlight = max(inFlight - 1, 0)
            if inFlight == 0 { arm(context) }
        }
        context.write(data, promise: promise)
    }

    private func arm(_ context: ChannelHandlerContext) {
        deadline?.cancel()
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }
}
