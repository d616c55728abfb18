/// The streams watching one person, as the hub finds them when that person changes.
///
/// Almost every person is watched by one stream, so the first is held inline and a table is made only for the
/// others: a stream of 50 JIDs costs the hub 50 small entries, not 50 tables (a table of one is about 100 bytes
/// of its own). Adding and removing are constant time however many streams watch the same person.
struct Watchers {
    private var first: EventSubscription?
    private var others: [ObjectIdentifier: EventSubscription] = [:]

    init(_ subscription: EventSubscription) { first = subscription }

    var isEmpty: Bool { first == nil && others.isEmpty }

    mutating func add(_ subscription: EventSubscription) {
        if first == nil {
            first = subscription
        } else if first !== subscription {
            others[ObjectIdentifier(subscription)] = subscription
        }
    }

    mutating func remove(_ subscription: EventSubscription) {
        if first === subscription {
            // One of the others, if any, takes the inline place.
            first = others.popFirst()?.value
        } else {
            others[ObjectIdentifier(subscription)] = nil
        }
    }

    func forEach(_ body: (EventSubscription) -> Void) {
        if let first { body(first) }
        for subscription in others.values { body(subscription) }
    }
}
