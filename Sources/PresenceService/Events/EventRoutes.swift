import HTTPTypes
import Hummingbird
import NIOCore
import PresenceSource
import PresenceStore
import PresenceWire

/// `GET /v1/presence/events`: the change stream as Server-Sent Events.
///
/// First a snapshot of every watched JID's current answer (the same JSON object as a query result), one event
/// per person or, with `snapshot=chunks`, a few events of many answers each (``SnapshotForm``); then one event each
/// time a watched JID's visible status changes, a loss and a refill included. A person who changes while the
/// snapshot is written comes right after it as that change instead (``SnapshotWriter``). `id:` on every event; a reconnect with `Last-Event-ID` gets every change since,
/// or a fresh snapshot when the history no longer reaches back that far or the id is another process's
/// (``EventID``: a replica behind the same balancer, or this one before a restart); a client cut off in the middle
/// of a snapshot resumes with a new one (``SnapshotWriter``). Each stream is told its own `retry:`, between one and
/// two times ``EventStreamConfiguration/retry``, so the clients of a replica that dies do not all come back in the
/// same millisecond.
enum EventRoutes {
    /// The header fields of a stream's answer.
    static let streamHeaders: HTTPFields = [
        .contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-cache",
        HTTPField.Name("X-Accel-Buffering")!: "no",
    ]

    /// Why a stream's request is refused as written.
    struct Refusal: Error {
        let answer: ServiceAnswer
    }

    /// What a stream's request asks for: the JIDs it watches (nil: everyone) and the form of its snapshot.
    struct StreamRequest {
        let watched: Set<BareJID>?
        let snapshot: SnapshotForm
    }

    /// What a stream's request asks for, or why it is refused as written: the one check `GET` and `HEAD` share.
    static func streamRequest(_ request: Request, hub: ChangeHub) -> Result<StreamRequest, Refusal> {
        let parameters = request.uri.queryParameters
        var form = SnapshotForm.events
        if let text = parameters.get("snapshot") {
            guard let named = SnapshotForm(rawValue: text) else {
                let names = SnapshotForm.allCases.map(\.rawValue).joined(separator: " or ")
                return .failure(
                    Refusal(answer: .badRequest("bad-request", "snapshot is \(names); '\(text)' given")))
            }
            form = named
        }
        let texts = parameters.getAll("jid")
        guard texts.count <= hub.configuration.maxJIDsPerStream else {
            return .failure(
                Refusal(
                    answer: .badRequest(
                        "bad-request",
                        "a stream watches at most \(hub.configuration.maxJIDsPerStream) JIDs (--events-max-jids); "
                            + "\(texts.count) given")))
        }
        guard !texts.isEmpty else { return .success(StreamRequest(watched: nil, snapshot: form)) }
        var jids = Set<BareJID>()
        for text in texts {
            do { jids.insert(try JID(text).bare) } catch {
                return .failure(
                    Refusal(answer: .badRequest("jid-malformed", "'\(text)' is not a valid JID: \(error)")))
            }
        }
        return .success(StreamRequest(watched: jids, snapshot: form))
    }

    static func add(
        to router: Router<ServiceRequestContext>, hub: ChangeHub, lookup: PresenceLookup, source: XMPPPresenceSource?
    ) {
        // HEAD: the stream's status and header fields, without opening a stream.
        router.head("/v1/presence/events") { request, _ -> Response in
            switch streamRequest(request, hub: hub) {
            case .failure(let refusal): refusal.answer.response
            case .success: Response(status: .ok, headers: streamHeaders)
            }
        }
        router.get("/v1/presence/events") { request, context -> Response in
            let asked: StreamRequest
            switch streamRequest(request, hub: hub) {
            case .failure(let refusal): return refusal.answer.response
            case .success(let streamRequest): asked = streamRequest
            }
            let lastEventID = request.headers[.lastEventID].flatMap { EventID(lastEventID: $0[...]) }
            let subscription = EventSubscription(watched: asked.watched, channel: context.channel)
            guard let start = hub.subscribe(subscription, resumingAfter: lastEventID) else {
                return QueryRoutes.json(
                    ErrorDocument(
                        ErrorReport(
                            condition: "resource-constraint",
                            message:
                                "\(hub.configuration.maxStreams) change streams are open already (--events-max-streams)"
                        )),
                    status: .serviceUnavailable)
            }
            // A connection that closes ends the stream at once (and releases its pins); a reader that only
            // half-closes is noticed at the next write, the heartbeat at the latest.
            context.channel.closeFuture.whenComplete { _ in subscription.finish() }
            return Response(
                status: .ok, headers: streamHeaders,
                body: ResponseBody { writer in
                    var stream = ChangeStreamWriter(
                        hub: hub, subscription: subscription, snapshotForm: asked.snapshot,
                        events: EventWriter(lookup: lookup, source: source))
                    try await stream.run(from: start, to: &writer)
                })
        }
    }
}

/// Formats Server-Sent Events into one buffer per write.
struct EventWriter {
    let lookup: PresenceLookup
    let source: XMPPPresenceSource?
    private var buffer = ByteBuffer()

    init(lookup: PresenceLookup, source: XMPPPresenceSource?) {
        self.lookup = lookup
        self.source = source
    }

    /// How much a write may carry at most (bar one event): a snapshot of 100,000 people goes out in pieces.
    static let flushBytes = 64 * 1024

    var byteCount: Int { buffer.readableBytes }

    mutating func take() -> ByteBuffer {
        defer { buffer = ByteBuffer() }
        return buffer
    }

    /// The user's answer as it is now, as a `cache-only` query gives it (the tier, partial, restored).
    func answer(_ key: BareJID) -> PresenceQueryResult {
        PresenceQueryResult(lookup.storedAnswer(key), live: source?.isLive)
    }

    /// One `presence` event: one person's answer.
    mutating func event(_ result: PresenceQueryResult, id: String) {
        buffer.writeString("id: \(id)\nevent: presence\ndata: ")
        buffer.writeBytes(result.jsonBytes())
        buffer.writeString("\n\n")
    }

    /// One `snapshot` event: several people's answers as one query document.
    mutating func snapshot(_ results: [PresenceQueryResult], id: String) {
        buffer.writeString("id: \(id)\nevent: snapshot\ndata: ")
        buffer.writeBytes(QueryDocument(results: results).jsonBytes())
        buffer.writeString("\n\n")
    }

    mutating func comment(_ text: String) {
        buffer.writeString(": \(text)\n\n")
    }

    mutating func retry(milliseconds: Int) {
        buffer.writeString("retry: \(milliseconds)\n\n")
    }
}

extension HTTPField.Name {
    static let lastEventID = HTTPField.Name("Last-Event-ID")!
}
