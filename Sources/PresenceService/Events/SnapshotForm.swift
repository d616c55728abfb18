/// How a change stream writes its snapshot (`GET /v1/presence/events?snapshot=...`).
///
/// `events` (the default) writes one `presence` event per person, as every client of the stream has read it.
/// `chunks` writes `snapshot` events, each holding up to ``answersPerChunk`` answers as one query document
/// (`{"error":null,"results":[...]}`, the batch query's document): a browser dispatches a few hundred events for a
/// snapshot of 100,000 people instead of 100,000, which is most of what opening a big people page costs. `table`
/// writes the same `snapshot` events with the answers as a ``SnapshotTable`` (member names once, then a row of
/// values per answer): about half the bytes to write, send and parse.
enum SnapshotForm: String, CaseIterable, Sendable {
    case events
    case chunks
    case table

    /// The answers of a `snapshot` event: about 150 KB of JSON in chunks, 80 KB as a table, parsed by a browser
    /// in a millisecond or two, and one write of the stream's.
    static let answersPerChunk = 500

    /// The answers each snapshot event carries.
    var answersPerEvent: Int {
        switch self {
        case .events: 1
        case .chunks, .table: SnapshotForm.answersPerChunk
        }
    }
}
