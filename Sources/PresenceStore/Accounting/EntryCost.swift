import PresenceModel

/// The cost, in estimated bytes, that evicting storages charge for one user: the key and the compactly encoded
/// value plus a fixed overhead for the structures around them. NSCache and LRU use the same estimate, so one
/// cost limit means the same for both.
enum EntryCost {
    static let overhead = 96

    static func estimate(_ key: BareJID, _ value: UserPresence) -> Int {
        key.rawValue.utf8.count + UserPresenceCoding.encodedSize(of: value) + overhead
    }
}
