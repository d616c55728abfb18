import Logging
import NIOCore
import PresenceIngest
import XMPPStream

/// One feeder's connection, read on its event loop: the bytes are parsed where they arrive, and the stanzas of a
/// read of a few (what a live feeder sends at a time) are applied there too, so that a change reaches the change
/// streams on the same loop in the same turn, with no thread woken in between. Larger reads are applied by the
/// feed's ``ApplyPool`` (see ``IngestSession``).
///
/// Feeding never blocks the event loop: at most ``IngestSession/bytesFedWithoutBlocking`` bytes are fed at a time,
/// and only while the feeder's lane in the pool has room. (A stream error waits for what came before it to be
/// applied, at most a lane's few batches, so that the error is answered after everything it follows.) Without room, the rest of the read is held and the connection
/// reads nothing more until the pool has applied enough (the back-pressure that keeps a fast feeder from making
/// the service buffer without bound); a read is fed a slice per turn of the loop, so the loop's other connections
/// are served in between.
///
/// Malformed XML, restricted XML or an oversized stanza ends the stream with a `<stream:error>` naming the
/// condition and its position; a feeder that does not prove the feed secret gets `<not-authorized/>`. Either
/// way everything applied before stays applied.
final class FeedConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let session: IngestSession
    private let handshake: ComponentHandshake?
    private let statistics: ServiceStatistics
    private var logger: Logger
    /// Bytes read and not fed yet: while the pool has no room, or between the slices of a read.
    private var held: ByteBuffer?
    /// Whether the connection was asked to read while bytes were held: it reads once they are fed.
    private var readDeferred = false
    /// The feeder closed its side, or the connection closed: the stream ends once the held bytes are fed.
    private var inputEnded = false
    private var ended = false

    init(session: IngestSession, handshake: ComponentHandshake?, statistics: ServiceStatistics, logger: Logger) {
        self.session = session
        self.handshake = handshake
        self.statistics = statistics
        self.logger = logger
        if let handshake {
            session.onEvent = { handshake.handle($0) }
            session.admits = { handshake.admits($0) }
        }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        logger[metadataKey: "feeder"] = "\(context.channel.remoteAddress?.description ?? "unknown")"
        statistics.feederConnected()
        logger.info("feeder connected")
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !ended else { return }
        var bytes = unwrapInboundIn(data)
        if var earlier = held {
            earlier.writeBuffer(&bytes)
            held = earlier
        } else {
            held = bytes
        }
        feedHeld(context: context)
    }

    /// Reads only once the held bytes are fed.
    func read(context: ChannelHandlerContext) {
        if held == nil { context.read() } else { readDeferred = true }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            inputEnded = true
            if held == nil { finish(context: context) }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        inputEnded = true
        if held == nil { finish(context: context) }
        context.fireChannelInactive()
    }

    /// Feeds the held bytes a slice at a time, one slice per turn of the loop, while the pool has room; then
    /// reads on, or ends the stream if the input ended.
    private func feedHeld(context: ChannelHandlerContext) {
        guard !ended, var bytes = held else { return }
        if let progress = session.applyProgress, !progress.hasRoom {
            // Back once the pool has applied enough of this feeder's batches.
            return continueOnLoop(after: progress.room, context: context) { $0.feedHeld(context: $1) }
        }
        let slice = bytes.readSlice(length: min(bytes.readableBytes, IngestSession.bytesFedWithoutBlocking))!
        held = bytes.readableBytes > 0 ? bytes : nil
        let failure = slice.withUnsafeReadableBytes { slice -> XMPPStreamError? in
            do throws(XMPPStreamError) {
                try session.feed(slice)
                return nil
            } catch {
                return error
            }
        }
        if let handshake {
            let answer = handshake.takeOutput()
            if !answer.isEmpty { context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: answer)), promise: nil) }
        }
        if let failure {
            return end(
                context: context, with: failure, streamOpen: handshake.map { $0.state != .awaitingHeader } ?? false)
        }
        if case .refused(let reason) = handshake?.state { return refuseUnauthorized(context: context, reason: reason) }
        if held != nil {
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.execute { bound.value.0.feedHeld(context: bound.value.1) }
        } else if inputEnded {
            finish(context: context)
        } else if readDeferred {
            readDeferred = false
            context.read()
        }
    }

    /// Waits for `wait` off the loop, then takes `step` on it: the loop never blocks on the pool.
    private func continueOnLoop(
        after wait: @escaping @Sendable () async -> Void, context: ChannelHandlerContext,
        with step: @escaping (FeedConnectionHandler, ChannelHandlerContext) -> Void
    ) {
        let bound = NIOLoopBound((self, context, step), eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        Task {
            await wait()
            eventLoop.execute {
                let (handler, context, step) = bound.value
                step(handler, context)
            }
        }
    }

    /// The feeder's input is over: a stream cut inside a stanza is logged (everything before it is applied), and
    /// the connection closes once everything it sent is applied.
    private func finish(context: ChannelHandlerContext) {
        guard !ended else { return }
        ended = true
        guard let progress = session.applyProgress, !progress.isApplied else { return finishApplied(context: context) }
        continueOnLoop(after: progress.applied, context: context) { $0.finishApplied(context: $1) }
    }

    /// Ends the session once everything handed to the pool is applied (so that its last batch does not block the
    /// loop), and closes the connection.
    private func finishApplied(context: ChannelHandlerContext) {
        var failure: XMPPStreamError?
        do throws(XMPPStreamError) { try session.finish() } catch { failure = error }
        if let failure {
            // The feeder went away inside a stanza: nothing to answer, everything before it is applied.
            statistics.streamErrorOccurred()
            logger.warning(
                "feeder stream cut",
                metadata: ["condition": "\(failure.condition.rawValue)", "error": "\(failure.message)"])
        }
        disconnected()
        context.close(promise: nil)
    }

    /// Ends the stream after a parse error; `streamOpen`: the service's stream header was already sent.
    private func end(context: ChannelHandlerContext, with error: XMPPStreamError, streamOpen: Bool) {
        statistics.streamErrorOccurred()
        logger.warning(
            "feeder stream error",
            metadata: [
                "condition": "\(error.condition.rawValue)", "line": "\(error.position.line)",
                "column": "\(error.position.column)", "error": "\(error.message)",
            ])
        var writer = XMPPWriter()
        if !streamOpen { writer.openStream() }
        writer.streamError(for: error)
        writer.closeStream()
        close(context: context, after: writer.bytes)
    }

    /// Ends the stream of a feeder that did not prove the feed secret (XEP-0114): `not-authorized`, no detail.
    private func refuseUnauthorized(context: ChannelHandlerContext, reason: String) {
        statistics.streamErrorOccurred()
        logger.warning("feeder not authorized", metadata: ["reason": "\(reason)"])
        var writer = XMPPWriter()
        writer.streamError("not-authorized")  // RFC 6120 §4.9.3.12
        writer.closeStream()
        close(context: context, after: writer.bytes)
    }

    /// Writes `bytes`, then closes the connection; nothing the feeder sends after is read.
    private func close(context: ChannelHandlerContext, after bytes: [UInt8]) {
        held = nil
        ended = true
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: bytes))).whenComplete { _ in
            channel.close(promise: nil)
        }
        disconnected()
    }

    private func disconnected() {
        statistics.feederDisconnected()
        logger.info("feeder disconnected")
    }
}
