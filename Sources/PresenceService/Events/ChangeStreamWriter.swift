import Hummingbird
import NIOCore
import PresenceStore

/// Writes one open change stream: its `retry:`, its snapshot (unless it resumed), then each change as it comes,
/// until the stream ends.
///
/// The snapshot and the changes are written by functions of their own, so that the memory a snapshot needs
/// while it is written (its sorted keys, its held answers) is given back when it ends: what an open stream keeps
/// for as long as it is open is only what waiting for changes needs.
struct ChangeStreamWriter {
    let hub: ChangeHub
    let subscription: EventSubscription
    let snapshotForm: SnapshotForm
    private var events: EventWriter

    init(hub: ChangeHub, subscription: EventSubscription, snapshotForm: SnapshotForm, events: EventWriter) {
        self.hub = hub
        self.subscription = subscription
        self.snapshotForm = snapshotForm
        self.events = events
    }

    /// Writes the stream from `start` until it ends, then lets the subscription go.
    mutating func run(from start: ChangeHub.Start, to writer: inout any ResponseBodyWriter) async throws {
        defer { hub.unsubscribe(subscription) }
        let base = max(1, Int(hub.configuration.retry / .milliseconds(1)))
        events.retry(milliseconds: base + Int.random(in: 0 ... base))
        if case .snapshot(let sequence) = start {
            try await writeSnapshot(at: sequence, to: &writer)
        }
        try await writeChanges(to: &writer)
        try await writer.finish(nil)
    }

    private mutating func writeSnapshot(at sequence: UInt64, to writer: inout any ResponseBodyWriter) async throws {
        var snapshot = SnapshotWriter(
            form: snapshotForm, id: EventID(instance: hub.instance, sequence: sequence), subscription: subscription)
        let keys = subscription.watched.map { Array($0) } ?? hub.storage.keys
        for key in keys.sorted() {
            snapshot.add(key, events.answer(key), to: &events)
            // A snapshot of everyone is written as it is made, never held whole in memory.
            if events.byteCount >= EventWriter.flushBytes { try await flush(to: &writer) }
        }
        snapshot.finish(to: &events)
    }

    private mutating func writeChanges(to writer: inout any ResponseBodyWriter) async throws {
        var wakeups = subscription.wakeups.makeAsyncIterator()
        while true {
            if events.byteCount > 0 { try await flush(to: &writer) }
            guard let next = await subscription.next(&wakeups) else { return }
            for change in next.changes {
                events.event(
                    events.answer(change.key), id: EventID(instance: hub.instance, sequence: change.sequence).text)
            }
            if next.heartbeat { events.comment("heartbeat") }
        }
    }

    /// Writes what the events hold, bracketed for the stalled-reader check.
    private mutating func flush(to writer: inout any ResponseBodyWriter) async throws {
        subscription.writing(true)
        try await writer.write(events.take())
        subscription.writing(false)
    }
}
