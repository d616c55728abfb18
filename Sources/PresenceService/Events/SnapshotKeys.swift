import PresenceStore

/// The people a snapshot answers for, one at a time: the JIDs a stream names, in order, or everyone the storage
/// holds, read a part of the storage at a time (``MemoryStorage/keys(inPart:)``).
///
/// A snapshot of everyone therefore starts writing once one part is read rather than once every key is copied
/// (a stripe of a dictionary storage, a sixty-fourth of its keys), and holds one part's copy of the keys at a
/// time rather than a copy of all of them per stream being opened.
///
/// A person added or removed while the parts are read may be read or not; either way their change is after the
/// snapshot's number, so ``SnapshotWriter`` leaves them out and the change follows the snapshot.
struct SnapshotKeys {
    private let storage: (any MemoryStorage)?
    private var part = 0
    private var keys: [BareJID]
    private var index = 0

    /// The JIDs a stream names, in their order.
    init(named: [BareJID]) {
        storage = nil
        keys = named
    }

    /// Everyone `storage` holds, in its own order.
    init(everyoneIn storage: any MemoryStorage) {
        self.storage = storage
        keys = storage.keys(inPart: 0)
    }

    /// The next person, or nil once everyone was given.
    mutating func next() -> BareJID? {
        while index == keys.count {
            guard let storage, part + 1 < storage.keyPartCount else { return nil }
            part += 1
            keys = storage.keys(inPart: part)
            index = 0
        }
        defer { index += 1 }
        return keys[index]
    }
}
