import PresenceModel

/// The last-activity questions of one session (XEP-0012, one per member the server said nothing about): the
/// ones waiting to be sent, in the order they were asked for, and the ones in flight, never more than
/// ``limit`` at a time.
///
/// A server that reads a client slowly (ejabberd's `c2s_shaper`, Prosody's `mod_limits`) would otherwise be
/// handed every question at once: thousands of them queued in the connection, draining at a few kilobytes a
/// second, with every later stanza (a lookup's probe, the keep-alive, the stream's close) behind them. With the
/// window the connection holds at most ``limit`` questions, the next leaving as an answer comes back, so the
/// questions go at the rate the server answers and a later stanza waits behind a window, not a backlog.
struct QuestionWindow {
    /// One question waiting to be sent.
    struct Question: Equatable {
        let member: BareJID
        /// Probe the member first (a question asked again: the presence may have been lost, not only the answer).
        let probeFirst: Bool
    }

    /// A question sent and not answered yet.
    struct InFlight {
        let member: BareJID
        /// Where the request stands among everything the session issued (see ``Confirmations``).
        let issue: Int
        /// The bytes sent for it (with the probe before it, if any).
        let bytes: Int
        let sent: ContinuousClock.Instant
    }

    /// The most questions in flight at once.
    var limit: Int
    /// Sent and not answered, by request id.
    private(set) var inFlight: [String: InFlight] = [:]
    /// Members with a question in flight, and how many.
    private var inFlightMembers: [BareJID: Int] = [:]
    /// Questions a lookup waits for go before the others.
    private var urgent = Queue()
    private var waiting = Queue()
    private var queued: Set<BareJID> = []

    /// Questions in the order they were asked for.
    private struct Queue {
        private var items: [Question] = []
        private var start = 0

        var count: Int { items.count - start }

        mutating func append(_ question: Question) { items.append(question) }

        mutating func take(_ count: Int) -> ArraySlice<Question> {
            let end = min(items.count, start + count)
            let taken = items[start ..< end]
            start = end
            if start == items.count {
                items.removeAll(keepingCapacity: true)
                start = 0
            }
            return taken
        }

        mutating func removeAll(where remove: (Question) -> Bool) {
            items = items[start...].filter { !remove($0) }
            start = 0
        }

        mutating func removeAll() {
            items.removeAll()
            start = 0
        }
    }

    init(limit: Int) {
        precondition(limit > 0, "a window holds at least one question")
        self.limit = limit
    }

    /// Questions waiting to be sent.
    var waitingCount: Int { urgent.count + waiting.count }

    /// When the oldest question in flight was sent.
    var oldestSent: ContinuousClock.Instant? { inFlight.values.lazy.map(\.sent).min() }

    /// Whether a question about `member` is waiting or in flight.
    func isAsking(_ member: BareJID) -> Bool {
        queued.contains(member) || inFlightMembers[member] != nil
    }

    /// Queues a question about each of `members` not already waiting to be sent (one question in the queue
    /// answers for every round that asks: its request is issued when it is sent, after all of them opened).
    /// `urgent` questions (a lookup waits for them) go before every other waiting one.
    mutating func enqueue(_ members: some Sequence<BareJID>, probeFirst: Bool = false, urgent: Bool = false) {
        for member in members where queued.insert(member).inserted {
            let question = Question(member: member, probeFirst: probeFirst)
            if urgent { self.urgent.append(question) } else { waiting.append(question) }
        }
    }

    /// Takes the questions the window has room for now, urgent ones first, each queue oldest first.
    mutating func take() -> [Question] {
        var room = max(0, limit - inFlight.count)
        var taken = Array(urgent.take(room))
        room -= taken.count
        taken += waiting.take(room)
        for question in taken { queued.remove(question.member) }
        return taken
    }

    /// A question was sent as request `id`.
    mutating func sent(_ id: String, member: BareJID, issue: Int, bytes: Int, at now: ContinuousClock.Instant) {
        inFlight[id] = InFlight(member: member, issue: issue, bytes: bytes, sent: now)
        inFlightMembers[member, default: 0] += 1
    }

    /// The answer to request `id` arrived: its place in the window is free. Nil when `id` is not in flight.
    mutating func answered(_ id: String) -> InFlight? {
        guard let request = inFlight.removeValue(forKey: id) else { return nil }
        release(request.member)
        return request
    }

    /// Frees the places of requests sent `timeout` ago or more and never answered (a server may drop a stanza):
    /// a round still waiting for their members asks again.
    mutating func expire(at now: ContinuousClock.Instant, timeout: Duration) {
        for (id, request) in inFlight where now - request.sent >= timeout {
            inFlight[id] = nil
            release(request.member)
        }
    }

    /// Forgets every question about `members` (they left the roster).
    mutating func forget(_ members: Set<BareJID>) {
        inFlight = inFlight.filter { !members.contains($0.value.member) }
        for member in members { inFlightMembers[member] = nil }
        guard !queued.isDisjoint(with: members) else { return }
        urgent.removeAll { members.contains($0.member) }
        waiting.removeAll { members.contains($0.member) }
        queued.subtract(members)
    }

    /// Forgets every question: nobody waits for an answer any more.
    mutating func removeAll() {
        inFlight.removeAll()
        inFlightMembers.removeAll()
        urgent.removeAll()
        waiting.removeAll()
        queued.removeAll()
    }

    private mutating func release(_ member: BareJID) {
        if let count = inFlightMembers[member], count > 1 {
            inFlightMembers[member] = count - 1
        } else {
            inFlightMembers[member] = nil
        }
    }
}
