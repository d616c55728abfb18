import NIOCore
import NIOHTTP1

/// Closes a connection whose next request head has not fully arrived within a deadline: from the connection's
/// start, and from the end of each response on a connection kept alive.
///
/// A read-idle timeout does not stop a client that sends its headers one byte a second (each byte resets it); a
/// deadline for the whole head does. It sits right after HTTP decoding, sees each complete head (`.head`) and
/// each response's end, and is silent while a request is being answered, however long a change stream runs. Its
/// time is the event loop's clock (`EventLoop.now`), which a test's `EmbeddedEventLoop` moves by hand.
final class RequestHeadTimeoutHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let timeout: TimeAmount
    /// When the wait for the current head began; nil while a request is being answered.
    private var waitingSince: NIODeadline?
    /// One timer per connection, re-armed only when it fires: scheduling and cancelling a task per request cost
    /// the single-JID benchmark about a tenth of its rate.
    private var timer: Scheduled<Void>?
    /// Requests whose head arrived and whose response has not ended (pipelining can make it more than one).
    private var inFlight = 0

    init(timeout: Duration) {
        self.timeout = .nanoseconds(
            Int64(timeout.components.seconds) * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { startWaiting(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        startWaiting(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) {
            inFlight += 1
            waitingSince = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            inFlight = max(inFlight - 1, 0)
            if inFlight == 0 { startWaiting(context) }
        }
        context.write(data, promise: promise)
    }

    private func startWaiting(_ context: ChannelHandlerContext) {
        waitingSince = context.eventLoop.now
        if timer == nil { schedule(context, in: timeout) }
    }

    private func schedule(_ context: ChannelHandlerContext, in delay: TimeAmount) {
        let loopBound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: delay) {
            let (handler, context) = loopBound.value
            handler.timer = nil
            guard let since = handler.waitingSince else { return }  // answering: the next wait re-arms
            let deadline = since + handler.timeout
            let now = context.eventLoop.now
            if deadline <= now {
                context.close(promise: nil)
            } else {
                handler.schedule(context, in: deadline - now)
            }
        }
    }
}
