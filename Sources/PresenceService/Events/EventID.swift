/// A change stream's event id: `INSTANCE-N` for change `N` of this process, `INSTANCE-N:k` for the `k`-th event
/// of a snapshot taken at change `N`.
///
/// Change numbers count one process's changes: they mean nothing to another replica behind the same balancer, nor
/// to this one after a restart. The instance, drawn at random when the process starts, says whose numbers they
/// are, so a client that reconnects with a `Last-Event-ID` from elsewhere gets a fresh snapshot, never a resume
/// from someone else's number that would skip changes or replay older ones.
struct EventID: Hashable, Sendable {
    let instance: String
    let sequence: UInt64

    /// A new process's instance: 64 random bits in hexadecimal.
    static func newInstance() -> String {
        let value = UInt64.random(in: 0 ... .max)
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The change a resume continues after, from a `Last-Event-ID` header; nil for a snapshot event's id (the
    /// snapshot was cut off: only a new one is complete), a malformed id, or an id of no instance at all.
    init?(lastEventID text: Substring) {
        guard let dash = text.lastIndex(of: "-") else { return nil }
        let number = text[text.index(after: dash)...]
        guard !number.contains(":"), let sequence = UInt64(number) else { return nil }
        instance = String(text[..<dash])
        self.sequence = sequence
    }

    init(instance: String, sequence: UInt64) {
        self.instance = instance
        self.sequence = sequence
    }

    var text: String { "\(instance)-\(sequence)" }

    /// The id of a snapshot's `index`-th event (1-based) when it is not the last.
    func snapshotEvent(_ index: Int) -> String { "\(text):\(index)" }
}
