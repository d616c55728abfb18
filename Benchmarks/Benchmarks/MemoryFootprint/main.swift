import PresenceIngest
import PresencePressure
import PresenceStore
import PresenceWorkload

// Resident memory per user at 1M users, with the data `presence generate` writes: 1M people with their
// devices, shows, statuses (English and German) and attendance. The stream is generated first; the resident
// set is read before and after feeding it into each store, in a separate process run per store.
//
//   swift run -c release --package-path Benchmarks MemoryFootprint [dictionary|plain] [users] [updates]

let arguments = CommandLine.arguments.dropFirst()
let store = arguments.first ?? "dictionary"
let users = arguments.dropFirst().first.flatMap { Int($0) } ?? 1_000_000
let updates = arguments.dropFirst(2).first.flatMap { Int($0) } ?? 4 * users

var generator = PresenceStreamGenerator(.init(users: users, updates: updates, seed: 1))
let stream = generator.generate()
let time = PresenceTime(secondsSinceEpoch: 1_795_400_000)
let before = ProcessMemory.residentBytes() ?? 0
var feed = PresenceFeed()
var count = 0
switch store {
case "plain":
    var map: [BareJID: UserPresence] = [:]
    stream.withUnsafeBytes { bytes in
        try? feed.feed(bytes) { map[$0.from.bare, default: UserPresence()].apply($0, receivedAt: time) }
    }
    count = map.count
    let after = ProcessMemory.residentBytes() ?? 0
    print("[BareJID: UserPresence]: \(count) users, \((after - before) / max(count, 1)) resident bytes per user")
    withExtendedLifetime(map) {}
default:
    let storage = DictionaryMemoryStorage()
    stream.withUnsafeBytes { bytes in
        try? feed.feed(bytes) { storage.apply($0, receivedAt: time) }
    }
    count = storage.count
    let after = ProcessMemory.residentBytes() ?? 0
    let estimated = storage.statistics.estimatedBytes / max(count, 1)
    print(
        "DictionaryMemoryStorage: \(count) users, \((after - before) / max(count, 1)) resident bytes per user (\(estimated) estimated)"
    )
    withExtendedLifetime(storage) {}
}
print("stream: \(stream.count) bytes, \(feed.statistics.presenceUpdates) updates")
