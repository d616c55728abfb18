import Foundation
import PresenceStore

/// The storages the contract suite runs against, by name, each built fresh for a test.
enum StorageKind: String, CaseIterable, CustomStringConvertible, Sendable {
    case dictionary, nscache, lru

    var description: String { rawValue }

    /// A storage without limits: it must behave exactly like the dictionary until pressure or limits apply.
    func make() -> any MemoryStorage {
        switch self {
        case .dictionary: DictionaryMemoryStorage()
        case .nscache: NSCacheMemoryStorage()
        case .lru: LRUMemoryStorage()
        }
    }

    /// A storage holding at most `count` users.
    func make(countLimit count: Int) -> any MemoryStorage {
        switch self {
        case .dictionary: DictionaryMemoryStorage()
        case .nscache: NSCacheMemoryStorage(countLimit: count)
        case .lru: LRUMemoryStorage(countLimit: count)
        }
    }
}

func jid(_ string: String) -> BareJID { try! BareJID(string) }

func time(_ seconds: Int64) -> PresenceTime { PresenceTime(secondsSinceEpoch: 1_795_400_000 + seconds) }

func available(_ full: String, priority: Int8 = 0, show: PresenceShow? = nil, status: String? = nil,
               attendance: Attendance? = nil, delayedAt: PresenceTime? = nil) -> PresenceUpdate {
    PresenceUpdate(from: try! JID(full), availability: .available,
                   details: PresenceDetails(show: show, status: status, priority: priority, attendance: attendance),
                   delayedAt: delayedAt)
}

func unavailable(_ full: String, status: String? = nil, attendance: Attendance? = nil) -> PresenceUpdate {
    PresenceUpdate(from: try! JID(full), availability: .unavailable, details: PresenceDetails(status: status, attendance: attendance))
}

func user(_ updates: PresenceUpdate...) -> UserPresence {
    var value = UserPresence()
    for (index, update) in updates.enumerated() { value.apply(update, receivedAt: time(Int64(index))) }
    return value
}

/// Collects removal events from any thread.
final class RemovalLog: @unchecked Sendable {
    // @unchecked: `events` is only touched under `lock`.
    private let lock = NSLock()
    private var events: [RemovalEvent] = []

    func append(_ event: RemovalEvent) { lock.withLock { events.append(event) } }
    var all: [RemovalEvent] { lock.withLock { events } }
}
