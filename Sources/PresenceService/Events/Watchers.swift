/// The streams watching one person, as the hub finds them when that person changes.
///
/// Most people are watched by one stream or a few, and the hub holds one of these per watched person for as long
/// as the streams are open: the first is held inline, up to ``listLimit`` more in a list, and a table is made
/// only for a person watched by more (everyone's manager on everyone's screen), where a list would make each closing
/// stream scan thousands. A list of ten is about 110 bytes where a table of ten is about 330 (measured with
/// heaptrack; 0.9 KiB less resident memory per stream of 50 JIDs out of 10,000 people).
struct Watchers {
    /// Beyond this many streams besides the first, they are kept in a table.
    static let listLimit = 16

    private var first: EventSubscription?
    private var few: [EventSubscription] = []
    private var many: [ObjectIdentifier: EventSubscription]?

    init(_ subscription: EventSubscription) { first = subscription }

    var isEmpty: Bool { first == nil && few.isEmpty && many?.isEmpty != false }

    mutating func add(_ subscription: EventSubscription) {
        if first == nil {
            first = subscription
        } else if first === subscription {
            return
        } else if many != nil {
            many?[ObjectIdentifier(subscription)] = subscription
        } else if !few.contains(where: { $0 === subscription }) {
            few.append(subscription)
            if few.count > Self.listLimit {
                many = Dictionary(uniqueKeysWithValues: few.map { (ObjectIdentifier($0), $0) })
                few = []
            }
        }
    }

    mutating func remove(_ subscription: EventSubscription) {
        if first === subscription {
            // One of the others, if any, takes the inline place.
            first = few.popLast() ?? many?.popFirst()?.value
        } else if many != nil {
            many?[ObjectIdentifier(subscription)] = nil
        } else if let index = few.firstIndex(where: { $0 === subscription }) {
            few.swapAt(index, few.count - 1)
            few.removeLast()
        }
    }

    func forEach(_ body: (EventSubscription) -> Void) {
        if let first { body(first) }
        for subscription in few { body(subscription) }
        if let many { for subscription in many.values { body(subscription) } }
    }
}
