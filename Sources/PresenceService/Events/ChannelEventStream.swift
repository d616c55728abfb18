import NIOCore
import NIOHTTP1
import PresenceStore

/// Writes one change stream on its connection's event loop: the response head, `retry:`, the snapshot (unless the
/// stream resumed), then each change as it comes, until the stream or the connection ends.
///
/// No task waits for changes: the subscription wakes the stream, whose ``pump()`` its event loop then runs
/// (``LoopPumps``, one task for the streams a loop has to write), and the
/// connection's writability is the back-pressure (the stream writes while the channel takes bytes and resumes when
/// it does again; meanwhile changes coalesce in the subscription). An open stream therefore costs the replica its
/// connection and its subscription, and nothing per change it waits for. A big snapshot, or a burst of changes, is
/// written ``bytesPerTurn`` at a time, so the loop's other connections are served while it goes out.
final class ChannelEventStream {
    private let context: ChannelHandlerContext
    /// The connection (the context's, held to save a lookup per write).
    private let channel: any Channel
    private let endpoint: EventStreamEndpoint
    private var subscription: EventSubscription?
    private var events: EventWriter
    /// The HTTP encoder's context, whose writes go to the transport below it: the body's bytes are written there,
    /// framed by the stream (``EventStreamFraming``). Nil when the connection closed before the stream opened.
    private var body: ChannelHandlerContext?
    /// The snapshot being written: its writer and the people it has yet to answer for.
    private var snapshot: (writer: SnapshotWriter, keys: SnapshotKeys)?
    /// Changes taken from the subscription and not written yet, and the next one's index: a burst (everyone's
    /// answer again when the source turns live) is written in pieces, as a snapshot is.
    private var backlog: (changes: [(key: BareJID, sequence: UInt64)], next: Int)?
    private var ended = false
    /// Whether the connection takes more bytes: the channel's writability as SwiftNIO reports each change of it
    /// (``writabilityChanged()``, called from inside the write that crosses a watermark). The channel's own flag is
    /// an object of its own that writing never touches, so reading it costs a cache miss per event.
    private var writable: Bool
    /// Whether ``pump()`` is running: writing can make the channel writable again at once, and the writability
    /// change calls ``pump()`` from inside the write; that call returns and the running one goes on.
    private var pumping = false
    /// Armed when the connection refuses more bytes, cancelled when it takes them again: when it fires, the reader
    /// has stopped reading for ``EventStreamConfiguration/writeTimeout`` and the stream is closed. On the event
    /// loop, so a busy service still closes its stalled streams on time.
    private var stallTimer: Scheduled<Void>?

    /// At most this much of a snapshot is written in one turn of the event loop.
    static let bytesPerTurn = 4 * EventWriter.flushBytes

    /// - Parameters:
    ///   - context: the context of the handler that read the request, which writes the response head.
    ///   - version: the request's HTTP version, which decides how the body is framed.
    init(context: ChannelHandlerContext, endpoint: EventStreamEndpoint, version: HTTPVersion) {
        self.context = context
        channel = context.channel
        writable = context.channel.isWritable
        self.endpoint = endpoint
        events = EventWriter(
            lookup: endpoint.lookup, live: endpoint.live, framing: EventStreamFraming(version: version),
            changes: endpoint.hub.events)
    }

    /// Opens the stream `request` asks for and writes its head; false when the hub holds its most streams already
    /// (nothing was written: the caller answers 503).
    func open(
        _ asked: EventStreamEndpoint.StreamRequest, request: HTTPRequestHead, date: String, serverName: String
    ) -> Bool {
        let (pumps, bound) = (
            endpoint.pumps.pumps(for: context.eventLoop), NIOLoopBound(self, eventLoop: context.eventLoop)
        )
        let hub = endpoint.hub
        let subscription = EventSubscription(
            watched: asked.watched.map(hub.watched), channel: channel, clock: hub.clock
        ) {
            pumps.wake(bound)
        }
        let lastEventID = request.headers["Last-Event-ID"].first.flatMap { EventID(lastEventID: $0[...]) }
        guard let start = hub.subscribe(subscription, resumingAfter: lastEventID) else {
            subscription.finish()
            return false
        }
        self.subscription = subscription
        var headers = HTTPHeaders()
        for field in EventStreamAnswer.fields { headers.add(name: field.name.rawName, value: field.value) }
        headers.add(name: "Date", value: date)
        headers.add(name: "Server", value: serverName)
        for field in events.framing.headerFields { headers.add(name: field.name, value: field.value) }
        let head = HTTPResponseHead(version: request.version, status: .ok, headers: headers)
        context.write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
        // The body goes below the HTTP encoder, framed already: see ``EventStreamFraming``.
        body = try? context.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self)
        let base = max(1, Int(hub.configuration.retry / .milliseconds(1)))
        events.retry(milliseconds: base + Int.random(in: 0 ... base))
        if case .snapshot(let sequence) = start {
            // The JIDs a stream names, in order; everyone, in the storage's own order: a screen of everyone
            // sorts by what it shows (the people page by department), and sorting 100,000 JIDs here took 160 ms
            // of the event loop before the first byte.
            let keys =
                subscription.watched.map { SnapshotKeys(named: $0.sorted) } ?? SnapshotKeys(everyoneIn: hub.storage)
            let writer = SnapshotWriter(
                form: asked.snapshot, id: EventID(instance: hub.instance, sequence: sequence),
                subscription: subscription)
            snapshot = (writer, keys)
        }
        pump()
        return true
    }

    /// Writes what there is to write while the connection takes it: the rest of the snapshot, then the pending
    /// changes and a due heartbeat, at most ``bytesPerTurn`` in one turn of the event loop. Ends the response once
    /// the subscription is finished, whatever is left unwritten.
    func pump() {
        guard !ended, !pumping, let subscription else { return }
        pumping = true
        defer { pumping = false }
        var written = 0
        var took = false
        while writable && !ended {
            if snapshot == nil && backlog == nil {
                guard let next = subscription.take() else { return end() }
                took = true
                if !next.changes.isEmpty { backlog = (next.changes, 0) }
                if next.heartbeat { events.comment("heartbeat") }
            } else if subscription.isFinished {
                return end()
            }
            if snapshot != nil {
                fillFromSnapshot()
            } else if backlog != nil {
                fillFromBacklog()
            }
            // Once all that was taken is written, a change marked since that take wakes the stream again (the
            // subscription's `wake`): there is nothing to ask for now. Without a take in this call (the end of a
            // snapshot, or of a backlog begun in an earlier turn), the changes marked meanwhile were woken for
            // once already, and are asked for here, whether this turn wrote anything or not (a snapshot's last
            // event can be empty when its people all changed meanwhile).
            guard events.byteCount > 0 else {
                if snapshot == nil && backlog == nil && took { break } else { continue }
            }
            written += events.byteCount
            write(events.take())
            if snapshot == nil && backlog == nil && took { break }
            if written >= Self.bytesPerTurn {
                let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
                context.eventLoop.execute { bound.value.pump() }
                break
            }
        }
        if !writable && !ended && stallTimer == nil {
            let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
            let timeout = endpoint.hub.configuration.writeTimeout
            stallTimer = context.eventLoop.scheduleTask(in: TimeAmount(timeout)) {
                bound.value.stalled()
            }
        }
    }

    /// The connection has refused more bytes for the whole write timeout: the reader is not reading. It cannot be
    /// told why, so the stream is closed, logged and counted.
    private func stalled() {
        stallTimer = nil
        guard !ended, !channel.isWritable else { return }
        endpoint.hub.closedAsStalled()
        ended = true
        release()
        channel.close(promise: nil)
    }

    /// Adds the snapshot's next answers to the events, up to a write's worth.
    private func fillFromSnapshot() {
        guard var current = snapshot else { return }
        snapshot = nil
        while events.byteCount < EventWriter.flushBytes {
            guard let key = current.keys.next() else { return current.writer.finish(to: &events) }
            current.writer.add(key, events.answer(key), to: &events)
        }
        snapshot = current
    }

    /// Adds the backlog's next changes to the events, up to a write's worth, each with its answer as it is now.
    private func fillFromBacklog() {
        guard var current = backlog else { return }
        backlog = nil
        let instance = endpoint.hub.instance
        while events.byteCount < EventWriter.flushBytes && current.next < current.changes.count {
            let change = current.changes[current.next]
            current.next += 1
            events.change(change.key, id: EventID(instance: instance, sequence: change.sequence))
        }
        if current.next < current.changes.count { backlog = current }
    }

    /// The connection takes bytes again, or refuses them.
    func writabilityChanged() {
        writable = channel.isWritable
        guard writable else { return }
        stallTimer?.cancel()
        stallTimer = nil
        pump()
    }

    /// The connection closed: the stream is over, with nothing more to write.
    func connectionClosed() {
        guard !ended else { return }
        ended = true
        release()
    }

    /// The stream is over (the service shuts down, or the reader was closed as stalled): the response ends and
    /// the connection closes.
    private func end() {
        ended = true
        let channel = self.channel
        // Closed once everything before the end is written: writes complete in order.
        let written = context.eventLoop.makePromise(of: Void.self)
        write(events.framing.end, promise: written)
        written.futureResult.whenComplete { _ in channel.close(promise: nil) }
        release()
    }

    /// Writes bytes of the body, framed already, to the transport below the HTTP encoder.
    private func write(_ bytes: ByteBuffer, promise: EventLoopPromise<Void>? = nil) {
        guard let body else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        body.writeAndFlush(NIOAny(bytes), promise: promise)
    }

    private func release() {
        stallTimer?.cancel()
        stallTimer = nil
        guard let subscription else { return }
        self.subscription = nil
        snapshot = nil
        backlog = nil
        subscription.finish()
        endpoint.hub.unsubscribe(subscription)
    }
}
