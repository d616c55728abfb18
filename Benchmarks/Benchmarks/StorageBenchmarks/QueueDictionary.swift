import Dispatch
import PresenceStore

/// The design many apps use and the baseline to beat: a dictionary behind a concurrent queue, reads with
/// `sync`, writes with barrier blocks. Writes here wait for their barrier (`sync(flags: .barrier)`), so every
/// counted operation has completed.
final class QueueDictionary: @unchecked Sendable {
    // @unchecked: `storage` is only read inside `queue.sync` and only written inside barrier blocks.
    private let queue = DispatchQueue(label: "presence.baseline", attributes: .concurrent)
    private var storage: [BareJID: UserPresence] = [:]

    func get(_ key: BareJID) -> UserPresence? { queue.sync { storage[key] } }

    func set(_ value: UserPresence, for key: BareJID) { queue.sync(flags: .barrier) { storage[key] = value } }

    func apply(_ update: PresenceUpdate, receivedAt: PresenceTime) {
        queue.sync(flags: .barrier) {
            storage[update.from.bare, default: UserPresence()].apply(update, receivedAt: receivedAt)
        }
    }
}
