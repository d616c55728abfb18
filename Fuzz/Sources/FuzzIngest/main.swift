import FuzzSupport
import PresenceIngest
import PresenceModel
import PresenceStore
import XMPPStream

/// Bytes → parser → decoder → storages never crash, and every storage that does not evict ends with exactly what
/// a plain model of `[BareJID: UserPresence]` holds after the same updates: the dictionary (encoded in place),
/// and an LRU without limits. Whatever went wrong in the input, the updates before it are all there.
func fuzzIngest(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count > 0 else { return 0 }
    let input = UnsafeRawBufferPointer(start: UnsafeRawPointer(start), count: count)
    let chunk = Int(input[0]) + 1
    let bytes = UnsafeRawBufferPointer(rebasing: input.dropFirst())
    // A clock that moves on by the update, so that times both tie and differ.
    var tick: Int64 = 0
    let time = { (index: Int64) in PresenceTime(millisecondsSinceEpoch: 1_700_000_000_000 + index / 3) }

    var model: [BareJID: UserPresence] = [:]
    let dictionary = DictionaryMemoryStorage(stripes: 2)
    let lru = LRUMemoryStorage()
    var feed = PresenceFeed(
        configuration: .init(limits: XMPPStreamLimits(maxStanzaBytes: 8192, maxElementDepth: 16, maxChildElements: 64)))
    let apply = { (update: PresenceUpdate) in
        tick += 1
        let now = time(tick)
        model[update.from.bare, default: UserPresence()].apply(update, receivedAt: now)
        dictionary.apply(update, receivedAt: now)
        lru.apply(update, receivedAt: now)
    }
    var offset = 0
    var failed = false
    while offset < bytes.count && !failed {
        let end = min(offset + chunk, bytes.count)
        do throws(XMPPStreamError) {
            try feed.feed(UnsafeRawBufferPointer(rebasing: bytes[offset ..< end]), apply: apply)
        } catch { failed = true }
        offset = end
    }
    if !failed { try? feed.finish(apply: apply) }

    precondition(feed.statistics.presenceUpdates == Int(tick), "every update counted once")
    precondition(dictionary.count == model.count && lru.count == model.count, "one entry per user")
    for (jid, expected) in model {
        precondition(dictionary.get(jid) == expected, "the dictionary holds what the model holds for \(jid)")
        precondition(lru.get(jid) == expected, "the LRU holds what the model holds for \(jid)")
    }
    return 0
}

runLibFuzzer { data, size in fuzzIngest(data, Int(size)) }
