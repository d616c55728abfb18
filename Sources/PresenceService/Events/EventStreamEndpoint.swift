import PresenceStore
import PresenceWire

/// The change stream, `GET /v1/presence/events`: what a request asks for (``StreamRequest``), held to this
/// service's limits, and the answers its events carry.
///
/// ``FrontDoor`` calls ``decide(target:)`` for every request of the stream's route, whichever path carries it: each
/// rule on a stream's request exists here once. Access and readiness are ``RequestAdmission``'s; the number of open
/// streams is the hub's (``ChangeHub/subscribe(_:resumingAfter:)``).
struct EventStreamEndpoint: Sendable {
    let hub: ChangeHub
    let lookup: PresenceLookup
    /// Whether the XMPP source is live now; nil without a source.
    let live: @Sendable () -> Bool?
    /// Each event loop's woken streams, pumped together.
    let pumps = LoopPumps.Registry()

    /// What a stream's request asks for: the JIDs it watches (nil: everyone) and the form of its snapshot.
    struct StreamRequest: Sendable {
        let watched: WatchedJIDs?
        let snapshot: SnapshotForm
    }

    enum Decision {
        /// Open a stream.
        case stream(StreamRequest)
        /// Answer this instead: the request cannot be served as written.
        case refused(ServiceAnswer)
    }

    /// Decides on a request target (path and query, as the request line has them) of the stream's route.
    func decide(target: String) -> Decision {
        var form = SnapshotForm.events
        var texts: [Substring] = []
        for (name, value) in PercentEncodedTarget.queryPairs(of: target) {
            if name == "jid" {
                texts.append(value)
            } else if name == "snapshot" {
                guard let text = PercentEncodedTarget.decode(String(value)), let named = SnapshotForm(rawValue: text)
                else {
                    let names = SnapshotForm.allCases.map(\.rawValue).joined(separator: " or ")
                    return .refused(.badRequest("bad-request", "snapshot is \(names); '\(value)' given"))
                }
                form = named
            }
        }
        let most = hub.configuration.maxJIDsPerStream
        guard texts.count <= most else {
            return .refused(
                .badRequest(
                    "bad-request", "a stream watches at most \(most) JIDs (--events-max-jids); \(texts.count) given"))
        }
        guard !texts.isEmpty else { return .stream(StreamRequest(watched: nil, snapshot: form)) }
        var jids: [BareJID] = []
        jids.reserveCapacity(texts.count)
        for text in texts {
            switch PercentEncodedTarget.jid(String(text)) {
            case .jid(let jid): jids.append(jid)
            case .malformed(let report): return .refused(.badRequest(report.condition, report.message))
            }
        }
        return .stream(StreamRequest(watched: WatchedJIDs(jids), snapshot: form))
    }

    /// The answer to give when ``ChangeHub/subscribe(_:resumingAfter:)`` refuses a stream: the limit is reached.
    var tooManyStreams: ServiceAnswer {
        .error(
            .serviceUnavailable, "resource-constraint",
            "\(hub.configuration.maxStreams) change streams are open already (--events-max-streams)")
    }
}
