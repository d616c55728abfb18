import NIOCore
import NIOHTTP1

/// Answers a request head the HTTP decoder cannot read (over its limits: the target or a field over 80 KB, all of
/// them over 80 KB, more than 1,000 fields; or not HTTP/1.1 at all) with a 400 `bad-request` error document like
/// every other error, then closes the connection: after such a head the decoder cannot find the next request.
///
/// It sits right after the decoder, so the error never reaches Hummingbird, whose own answer is a bare 400 with no
/// body and no `Content-Type`, which a client generated from the OpenAPI document cannot read.
final class UnreadableRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let serverName: String
    private var answered = false

    init(serverName: String) { self.serverName = serverName }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        guard !answered else { return }
        answered = true
        let reason =
            parserError == .headerOverflow
            ? "the request head is over the limit (80 KB for the target and the header fields, 1,000 fields)"
            : "it is not an HTTP/1.1 request head (\(parserError))"
        let answer = ServiceAnswer.badRequest("bad-request", "the request cannot be read: \(reason)")
        var headers = HTTPHeaders()
        for field in answer.fields { headers.add(name: field.name.rawName, value: field.value) }
        headers.add(name: "Content-Length", value: String(answer.body.readableBytes))
        headers.add(name: "Server", value: serverName)
        headers.add(name: "Connection", value: "close")
        let head = HTTPResponseHead(version: .http1_1, status: .badRequest, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(answer.body))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}
