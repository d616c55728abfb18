import Foundation
import PresenceModel

// The storages this package ships, as the registry and the command line name them.

extension MemoryStorageKind {
    /// ``DictionaryMemoryStorage``: keeps every user; the reference an evicting storage is measured against.
    public static let dictionary = MemoryStorageKind(
        name: "dictionary", summary: "thread-safe compact hash map; never evicts, reports when over its memory budget",
        evicts: false, limits: []
    ) { configuration in
        DictionaryMemoryStorage(memoryBudget: configuration.memoryBudget)
    }
}

extension MemoryStorageKind {
    /// ``NSCacheMemoryStorage``: Foundation's NSCache as apps use it.
    public static let nscache = MemoryStorageKind(
        name: "nscache", summary: "Foundation's NSCache as apps use it; empties on a memory warning",
        evicts: true, limits: [.countLimit, .costLimit]
    ) { configuration in
        NSCacheMemoryStorage(countLimit: configuration.countLimit, costLimit: configuration.costLimit)
    }
}

extension MemoryStorageKind {
    /// ``LRUMemoryStorage``: a transparent LRU cache with exact limits.
    public static let lru = MemoryStorageKind(
        name: "lru", summary: "transparent LRU cache with exact count and cost limits and an optional time to live",
        evicts: true, limits: [.countLimit, .costLimit, .timeToLive, .warningRetain]
    ) { configuration in
        LRUMemoryStorage(
            countLimit: configuration.countLimit, costLimit: configuration.costLimit,
            timeToLive: configuration.timeToLive,
            warningRetainFraction: configuration.warningRetainFraction ?? LRUMemoryStorage.defaultWarningRetainFraction)
    }
}
