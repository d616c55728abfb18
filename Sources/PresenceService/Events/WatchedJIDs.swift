import PresenceStore

/// The JIDs one change stream watches: sorted, each once, in one array, and found by binary search.
///
/// A stream holds its JIDs for as long as it is open, so their layout is most of what a stream costs beyond its
/// connection: an array of 50 JIDs is 0.8 KiB where a set of them took 2.1 KiB (measured with heaptrack on
/// 2,000 streams), and the hub hands each stream the JID text it already holds for another watcher
/// (``ChangeHub/watched(_:)``), so that a person watched by five screens is one string, not five. The order is the
/// one the snapshot is written in.
struct WatchedJIDs: RandomAccessCollection, Sendable {
    /// The JIDs, sorted, each once.
    let sorted: [BareJID]

    /// `jids` sorted, each once.
    init(_ jids: some Sequence<BareJID>) {
        var sorted = Array(jids)
        sorted.sort()
        var unique = 0
        for index in sorted.indices where unique == 0 || sorted[index] != sorted[unique - 1] {
            sorted.swapAt(unique, index)
            unique += 1
        }
        sorted.removeLast(sorted.count - unique)
        self.sorted = sorted
    }

    /// Already sorted and unique: the JIDs `sorted` stands for, as the hub holds them.
    private init(sortedUnique: [BareJID]) { sorted = sortedUnique }

    /// The same JIDs, each replaced by `replacement(jid)`, which must be equal to it (the same text, held once).
    func replacingEach(with replacement: (BareJID) -> BareJID) -> WatchedJIDs {
        WatchedJIDs(sortedUnique: sorted.map(replacement))
    }

    var startIndex: Int { sorted.startIndex }
    var endIndex: Int { sorted.endIndex }
    subscript(position: Int) -> BareJID { sorted[position] }

    /// Whether `jid` is watched: a binary search.
    func contains(_ jid: BareJID) -> Bool {
        var (low, high) = (0, sorted.count)
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < jid { low = middle + 1 } else { high = middle }
        }
        return low < sorted.count && sorted[low] == jid
    }
}
