import PresenceModel

/// The members one session asks a ``SessionDirectory`` about: the ones waiting for the next question, and the
/// batch the question in flight answers for. One question at a time: members who fall silent while it is in
/// flight wait for the next, so a burst of rounds costs the server a few directory answers, not one each.
struct DirectoryQuestions {
    /// The batch a question in flight answers for.
    struct Batch {
        /// Where the question stands among everything the session issued (see ``Confirmations``): it speaks only
        /// for rounds opened before it.
        let issue: Int
        let members: Set<BareJID>
    }

    /// Whether the session asks the directory: false without one, and once it failed.
    private(set) var isUsable: Bool
    private(set) var waiting: Set<BareJID> = []
    private(set) var inFlight: Batch?

    init(isUsable: Bool) {
        self.isUsable = isUsable
    }

    /// Members to ask about at the next question.
    mutating func enqueue(_ members: Set<BareJID>) {
        waiting.formUnion(members)
    }

    /// Whether `member` waits for a question or is in the one in flight.
    func isAsking(_ member: BareJID) -> Bool {
        waiting.contains(member) || inFlight?.members.contains(member) == true
    }

    /// Whether a question can go now: members wait and none is in flight.
    var isDue: Bool { isUsable && inFlight == nil && !waiting.isEmpty }

    /// Starts a question for every waiting member, numbered `issue`; nil when none is due.
    mutating func take(issue: Int) -> Batch? {
        guard isDue else { return nil }
        let batch = Batch(issue: issue, members: waiting)
        waiting = []
        inFlight = batch
        return batch
    }

    /// The question in flight was answered: its batch, nil when none was in flight.
    mutating func answered() -> Batch? {
        defer { inFlight = nil }
        return inFlight
    }

    /// The directory failed: it is not asked again, and every member it was to answer for is returned.
    mutating func fail() -> Set<BareJID> {
        isUsable = false
        let members = waiting.union(inFlight?.members ?? [])
        waiting = []
        inFlight = nil
        return members
    }

    /// Members the session stopped waiting for (they left the roster).
    mutating func forget(_ members: Set<BareJID>) {
        waiting.subtract(members)
    }
}
