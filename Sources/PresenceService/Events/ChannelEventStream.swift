import NIOCore
import NIOHTTP1
import PresenceStore

/// Writes one change stream on its connection's event loop: the response head, `retry:`, the snapshot (unless the
/// stream resumed), then each change as it comes, until the stream or the connection ends.
///
/// No task waits for changes: the subscription wakes the stream by scheduling ``pump()`` on the event loop, and the
/// connection's writability is the back-pressure (the stream writes while the channel takes bytes and resumes when
/// it does again; meanwhile changes coalesce in the subscription). An open stream therefore costs the replica its
/// connection and its subscription, and nothing per change it waits for. A big snapshot is written
/// ``bytesPerTurn`` at a time, so the loop's other connections are served while it goes out.
final class ChannelEventStream {
    private let context: ChannelHandlerContext
    private let endpoint: EventStreamEndpoint
    private var subscription: EventSubscription?
    private var events: EventWriter
    /// The snapshot being written: its writer, the keys in order, and the next key's index.
    private var snapshot: (writer: SnapshotWriter, keys: [BareJID], next: Int)?
    private var ended = false

    /// At most this much of a snapshot is written in one turn of the event loop.
    static let bytesPerTurn = 4 * EventWriter.flushBytes

    init(context: ChannelHandlerContext, endpoint: EventStreamEndpoint) {
        self.context = context
        self.endpoint = endpoint
        events = EventWriter(lookup: endpoint.lookup, live: endpoint.live)
    }

    /// Opens the stream `request` asks for and writes its head; false when the hub holds its most streams already
    /// (nothing was written: the caller answers 503).
    func open(
        _ asked: EventStreamEndpoint.StreamRequest, request: HTTPRequestHead, date: String, serverName: String
    ) -> Bool {
        let (eventLoop, bound) = (context.eventLoop, NIOLoopBound(self, eventLoop: context.eventLoop))
        let subscription = EventSubscription(watched: asked.watched, channel: context.channel) {
            eventLoop.execute { bound.value.pump() }
        }
        let lastEventID = request.headers["Last-Event-ID"].first.flatMap { EventID(lastEventID: $0[...]) }
        let hub = endpoint.hub
        guard let start = hub.subscribe(subscription, resumingAfter: lastEventID) else {
            subscription.finish()
            return false
        }
        self.subscription = subscription
        var headers = HTTPHeaders()
        for field in EventRoutes.streamHeaders { headers.add(name: field.name.rawName, value: field.value) }
        headers.add(name: "Date", value: date)
        headers.add(name: "Server", value: serverName)
        // The stream ends with the connection; an HTTP/1.0 reader is told so, an HTTP/1.1 one reads chunks.
        if request.version.major == 1 && request.version.minor == 0 { headers.add(name: "Connection", value: "close") }
        let head = HTTPResponseHead(version: request.version, status: .ok, headers: headers)
        context.write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
        let base = max(1, Int(hub.configuration.retry / .milliseconds(1)))
        events.retry(milliseconds: base + Int.random(in: 0 ... base))
        if case .snapshot(let sequence) = start {
            // The JIDs a stream names, in order; everyone, in the storage's own order: a screen of everyone
            // sorts by what it shows (the people page by department), and sorting 100,000 JIDs here took 160 ms
            // of the event loop before the first byte.
            let keys = asked.watched.map { $0.sorted() } ?? hub.storage.keys
            let writer = SnapshotWriter(
                form: asked.snapshot, id: EventID(instance: hub.instance, sequence: sequence),
                subscription: subscription)
            snapshot = (writer, keys, 0)
        }
        pump()
        return true
    }

    /// Writes what there is to write while the connection takes it: the rest of the snapshot, then the pending
    /// changes and a due heartbeat. Ends the response once the subscription is finished.
    func pump() {
        guard !ended, let subscription else { return }
        let channel = context.channel
        var written = 0
        while channel.isWritable && !ended {
            if var current = snapshot {
                while events.byteCount < EventWriter.flushBytes && current.next < current.keys.count {
                    let key = current.keys[current.next]
                    current.next += 1
                    current.writer.add(key, events.answer(key), to: &events)
                }
                if current.next == current.keys.count {
                    current.writer.finish(to: &events)
                    snapshot = nil
                } else {
                    snapshot = current
                }
            } else {
                guard let next = subscription.take() else { return end() }
                let instance = endpoint.hub.instance
                for change in next.changes {
                    events.event(events.answer(change.key), id: EventID(instance: instance, sequence: change.sequence).text)
                }
                if next.heartbeat { events.comment("heartbeat") }
            }
            guard events.byteCount > 0 else {
                if snapshot == nil { break } else { continue }
            }
            written += events.byteCount
            context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.byteBuffer(events.take()))), promise: nil)
            if snapshot != nil && written >= Self.bytesPerTurn {
                let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
                context.eventLoop.execute { bound.value.pump() }
                return
            }
        }
        subscription.blocked(!channel.isWritable && !ended)
    }

    /// The connection takes bytes again, or refuses them.
    func writabilityChanged() {
        guard context.channel.isWritable else { return }
        subscription?.blocked(false)
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
        let channel = context.channel
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil))).whenComplete { _ in channel.close(promise: nil) }
        release()
    }

    private func release() {
        guard let subscription else { return }
        self.subscription = nil
        snapshot = nil
        subscription.finish()
        endpoint.hub.unsubscribe(subscription)
    }
}
