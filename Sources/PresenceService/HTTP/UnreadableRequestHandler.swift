import NIOCore
import NIOHTTP1

/// Answers a request head the HTTP decoder cannot read (over its limits: the target or a field over 80 KB, all of
/// them over 80 KB, more than 1,000 fields; or not HTTP/1.1 at all) with a 400 `bad-request` error document like
/// every other error, then closes the connection: after such a head the decoder cannot find the next request.
///
/// It sits after ``StorageAnswerHandler`` (which passes errors on) and before the conversion to HTTP types, so the
/// error never reaches Hummingbird, whose own answer is a bare 400 with no body and no `Content-Type`, which a client
/// generated from the OpenAPI document cannot read; requests answered on the event loop never pass through it. The
/// answer is written whole below the encoder, as the event loop's answers are (``AnswerMessage``).
final class UnreadableRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    private let serverName: String
    private var answered = false
    private var date = HTTPDate()
    /// The HTTP encoder's context, below which the answer is written.
    private var transport: ChannelHandlerContext?

    init(serverName: String) { self.serverName = serverName }

    func handlerAdded(context: ChannelHandlerContext) {
        transport = try? context.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        guard !answered else { return }
        answered = true
        let channel = context.channel
        guard let transport else { return channel.close(promise: nil) }
        let reason =
            parserError == .headerOverflow
            ? "the request head is over the limit (80 KB for the target and the header fields, 1,000 fields)"
            : "it is not an HTTP/1.1 request head (\(parserError))"
        let answer = ServiceAnswer.badRequest("bad-request", "the request cannot be read: \(reason)")
        let message = AnswerMessage(version: .http1_1, keepAlive: false, headOnly: false)
        let bytes = message.encode(answer, date: date.now(), serverName: serverName, allocator: channel.allocator)
        transport.writeAndFlush(NIOAny(IOData.byteBuffer(bytes))).whenComplete { _ in channel.close(promise: nil) }
    }
}
