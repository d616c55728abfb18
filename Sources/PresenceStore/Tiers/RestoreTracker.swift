import PresenceModel
import Synchronization

/// The users a disk tier restored at start whose status nobody has vouched for since: their answers say "as of"
/// the store's last write (``restoredAsOf(_:)``) until the user is written again or the source confirms them.
///
/// Asked on every lookup, so once every restored user is current no lock is taken for it again.
final class RestoreTracker: Sendable {
    /// What the store's last write before this process was current as of; nil when nothing was restored.
    let restoredAt: PresenceTime?
    /// Hashes of the restored users not current yet.
    private let restored: Locked<Set<Int>>
    /// Some restored user may not be current yet (cleared once none is).
    private let anyRestored: Atomic<Bool>
    private let observer = Locked<(@Sendable (BareJID) -> Void)?>(nil)

    /// - Parameters:
    ///   - restored: the hashes of the users read from disk.
    ///   - asOf: when the store's last write was; nil when it held nobody.
    init(restored: Set<Int>, asOf: PresenceTime?) {
        restoredAt = asOf
        self.restored = Locked(asOf == nil ? [] : restored)
        anyRestored = Atomic(asOf != nil && !restored.isEmpty)
    }

    /// When the user's restored status was current; nil when it is current.
    func restoredAsOf(_ key: BareJID) -> PresenceTime? {
        guard let restoredAt, anyRestored.load(ordering: .relaxed) else { return nil }
        return restored.withLock { restored in
            if restored.isEmpty {
                anyRestored.store(false, ordering: .relaxed)
                return nil
            }
            return restored.contains(key.hashValue) ? restoredAt : nil
        }
    }

    /// The user is current (written or confirmed); the observer hears of it when they were restored until now.
    /// Called after the write, outside the storage's locks.
    func markCurrent(_ key: BareJID) {
        guard anyRestored.load(ordering: .relaxed) else { return }
        let wasRestored = restored.withLock { restored in
            guard restored.remove(key.hashValue) != nil else { return false }
            if restored.isEmpty { anyRestored.store(false, ordering: .relaxed) }
            return true
        }
        if wasRestored, let observer = observer.withLock({ $0 }) { observer(key) }
    }

    /// Every user left: nobody is restored any more.
    func forgetAll() {
        restored.withLock { $0 = [] }
        anyRestored.store(false, ordering: .relaxed)
    }

    func setObserver(_ observer: (@Sendable (BareJID) -> Void)?) { self.observer.withLock { $0 = observer } }

    /// Restored users not current yet.
    var count: Int { restored.withLock { $0.count } }
}
