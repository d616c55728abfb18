import PresenceModel
import Synchronization

/// Publishes a storage's changes to its observer: in the order the storage made them, one at a time, and never
/// while the storage holds a lock.
///
/// A storage calls the `publish…` methods while it holds the lock that orders its writes to that user (so two
/// changes to one user are queued in the order they happened), and ``deliver()`` after releasing it. Whoever
/// calls ``deliver()`` first drains the queue for everyone, so observer calls never overlap and never run out
/// of order, and an observer may call back into the storage (its own changes are queued and delivered after it
/// returns). With no observer installed every method returns after one relaxed atomic load: nothing is
/// computed or allocated.
final class ChangePublisher: Sendable {
    typealias Observer = @Sendable (StorageChange) -> Void

    private struct Queue {
        var observer: Observer?
        var pending: [StorageChange] = []
        var delivering = false
    }

    private let queue = Locked(Queue())
    private let observed = Atomic<Bool>(false)

    init() {}

    /// Whether anyone listens; storages skip computing visible statuses when nobody does.
    @inline(__always)
    var isObserved: Bool { observed.load(ordering: .relaxed) }

    func setObserver(_ observer: Observer?) {
        queue.withLock {
            $0.observer = observer
            if observer == nil { $0.pending.removeAll() }
        }
        observed.store(observer != nil, ordering: .relaxed)
    }

    // MARK: Called with the storage's lock held

    /// A user's value went from `old` to `new` through an update or a `set`; a `lostCause` says the storage had
    /// lost the user, which makes it a refill. An update that removes the user is the caller's removal.
    func publishUpdate(_ key: BareJID, old: UserPresence?, new: UserPresence?, lostCause: RemovalCause?? = nil) {
        guard isObserved else { return }
        if new == nil, let old { return publishRemoval(key, old: old, cause: .explicit) }
        let before: VisibleStatus
        if old == nil, let lostCause { before = .lost(lostCause) } else { before = VisibleStatus(old) }
        let after = VisibleStatus(new)
        guard before != after else { return }
        let cause: StorageChange.Cause = before.state == .lost ? .refill : .update
        enqueue(StorageChange(key: key, old: before, new: after, cause: cause))
    }

    /// A user holding `old` left the storage.
    func publishRemoval(_ key: BareJID, old: UserPresence, cause: RemovalCause) {
        guard isObserved else { return }
        let before = VisibleStatus(old)
        let after: VisibleStatus = cause.isEviction ? .lost(cause) : .unknown
        guard before != after else { return }
        enqueue(StorageChange(key: key, old: before, new: after, cause: .removal(cause)))
    }

    /// The caller removed a user the storage had lost for `cause`: it now shows as unknown.
    func publishForgottenLoss(_ key: BareJID, cause: RemovalCause) {
        guard isObserved else { return }
        enqueue(StorageChange(key: key, old: .lost(cause), new: .unknown, cause: .removal(.explicit)))
    }

    private func enqueue(_ change: StorageChange) {
        queue.withLock { $0.pending.append(change) }
    }

    // MARK: Called after the storage's lock is released

    /// Delivers every queued change, unless another thread is delivering already (it will deliver them).
    func deliver() {
        guard isObserved else { return }
        var batch = queue.withLock { queue -> [StorageChange]? in
            guard !queue.delivering, !queue.pending.isEmpty else { return nil }
            queue.delivering = true
            defer { queue.pending.removeAll(keepingCapacity: true) }
            return queue.pending
        }
        while let changes = batch {
            if let observer = queue.withLock({ $0.observer }) {
                for change in changes { observer(change) }
            }
            batch = queue.withLock { queue -> [StorageChange]? in
                guard !queue.pending.isEmpty else {
                    queue.delivering = false
                    return nil
                }
                defer { queue.pending.removeAll(keepingCapacity: true) }
                return queue.pending
            }
        }
    }
}
