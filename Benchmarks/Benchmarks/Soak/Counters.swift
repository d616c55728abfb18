import Synchronization

// What the soak counts while it runs, from every task.

let failures = Atomic<Int>(0)
let failureNotes = Mutex<[String]>([])
func fail(_ what: String) {
    failures.add(1, ordering: .relaxed)
    failureNotes.withLock { if $0.count < 20 { $0.append(what) } }
}
let stanzasSent = Atomic<Int>(0)
let requestsDone = Atomic<Int>(0)
let eventsReceived = Atomic<Int>(0)
let memberChanges = Atomic<Int>(0)
let memberLogins = Atomic<Int>(0)
let memberErrors = Atomic<Int>(0)
let running = Atomic<Bool>(true)
/// Streams may end without counting as failures once this is set.
let closing = Atomic<Bool>(false)
