import PresenceStore
import PresenceWire

/// Writes a stream's snapshot in its ``SnapshotForm``: every watched person's answer once, with nobody missed or
/// repeated across the seam with the changes that follow, and numbered so that a client cut off in the middle of
/// it resumes with a new snapshot rather than a gap.
///
/// The seam: the hub numbers the snapshot and registers the stream in one step, so every change after the
/// snapshot's number is marked pending on the stream and every change up to it is in the storage the snapshot
/// reads. A person whose change is pending when their answer would be written is left out, because that change is
/// written right after the snapshot with the answer as it is then. The check is made when the event is written,
/// after the rest of its answers were read, so that a change applied just before its person was read has usually
/// been marked by then; one that has not comes twice, never not at all.
///
/// Ids: a snapshot taken at change `N` numbers its events `INSTANCE-N:1`, `INSTANCE-N:2`... and its last one
/// `INSTANCE-N` (``EventID``). Which event is the last is known only when the snapshot ends, so each event's
/// answers are held until the next answer or the end says what its id is. In chunks or a table, the last chunk is
/// always written, empty when its people all changed meanwhile or when the snapshot has nobody in it, to carry
/// `INSTANCE-N`: a client learns where every snapshot ends, an empty one included (a replica that holds nobody
/// says so, and the people page then asks again for everyone it shows). One event per person, a snapshot whose
/// last people changed meanwhile ends with an `INSTANCE-N:k` id, and a client cut off before the next change
/// gets a new snapshot; one with nobody in it is a comment, with no id.
struct SnapshotWriter {
    let form: SnapshotForm
    /// The change the snapshot was taken at.
    let id: EventID
    let subscription: EventSubscription
    private var held: [(key: BareJID, answer: PresenceQueryResult)] = []
    private var written = 0

    init(form: SnapshotForm, id: EventID, subscription: EventSubscription) {
        self.form = form
        self.id = id
        self.subscription = subscription
        held.reserveCapacity(form.answersPerEvent)
    }

    /// Adds one person's answer, writing the event before it into `stream` when that one is full.
    mutating func add(_ key: BareJID, _ answer: PresenceQueryResult, to stream: inout EventWriter) {
        if held.count == form.answersPerEvent { write(last: false, to: &stream) }
        held.append((key, answer))
    }

    /// Writes the last event, or says the snapshot is empty.
    mutating func finish(to stream: inout EventWriter) {
        write(last: true, to: &stream)
    }

    private mutating func write(last: Bool, to stream: inout EventWriter) {
        let answers = held.filter { !subscription.isPending($0.key) }.map(\.answer)
        held.removeAll(keepingCapacity: true)
        // In chunks or a table, the last chunk is written even when empty: it says where the snapshot ends.
        // Otherwise an empty chunk is left out.
        guard !answers.isEmpty || (last && form != .events) else {
            if last && written == 0 { stream.comment("snapshot \(id.text): nothing to show yet") }
            return
        }
        written += 1
        let eventID = last ? id.text : id.snapshotEvent(written)
        switch form {
        case .events: stream.event(answers[0], id: eventID)
        case .chunks: stream.snapshot(QueryDocument(results: answers), id: eventID)
        case .table: stream.snapshot(SnapshotTable(results: answers), id: eventID)
        }
    }
}
