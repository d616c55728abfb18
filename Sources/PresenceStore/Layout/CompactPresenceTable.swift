import PresenceModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A hash table from bare JID to `UserPresence` that keeps each user in one allocation: the JID's bytes and
/// the compactly encoded value side by side (``UserPresenceCoding``), after an optional header that belongs to
/// the table's owner (the LRU keeps its recency links there).
///
/// Measured at 1M users: a `[BareJID: UserPresence]` costs about 350 bytes per user; this table under 150.
/// Open addressing with linear probing over 8-byte slots, each the record's address with a 16-bit hash tag in
/// the unused top bits; removal shifts probe chains back instead of leaving tombstones.
///
/// Not thread-safe: owners serialise access (``DictionaryMemoryStorage`` stripes it under locks).
final class CompactPresenceTable {
    /// A stored user: the address of its record. Valid until the record is replaced or removed.
    struct Record: Hashable {
        let pointer: UnsafeMutableRawPointer
        /// The owner's header bytes at the start of the record.
        var header: UnsafeMutableRawPointer { pointer }
    }

    /// Bytes of owner header at the start of every record.
    let headerSize: Int
    /// After the owner header: u16 key length · u32 value length, then the key and value bytes.
    private var layoutSize: Int { headerSize + 6 }
    /// glibc's per-allocation overhead, for the byte estimate.
    static let allocationOverhead = 8

    private var slots: [UInt64]
    private var mask: Int
    private(set) var count = 0
    /// Where ``apply(_:receivedAt:key:hash:)`` writes a new value before it is copied into the record.
    private let scratch = ScratchBuffer()
    /// Bytes in records, headers included.
    private(set) var recordBytes = 0

    private static let addressMask: UInt64 = (1 << 48) - 1

    init(headerSize: Int = 0) {
        self.headerSize = headerSize
        slots = [UInt64](repeating: 0, count: 16)
        mask = 15
    }

    deinit {
        for slot in slots where slot != 0 { free(CompactPresenceTable.address(slot)) }
    }

    /// Estimated heap bytes: records with allocator overhead and the slot table.
    var estimatedBytes: Int {
        recordBytes + count * CompactPresenceTable.allocationOverhead + slots.count * 8
    }

    // MARK: Hashing

    /// The 64-bit hash of a key's bytes (SipHash, randomly seeded per process, so hostile JIDs cannot aim at
    /// one probe chain). Owners use the top bits to pick a stripe; the table uses the low 48.
    static func hash(_ key: UnsafeRawBufferPointer) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(bytes: key)
        return UInt64(bitPattern: Int64(hasher.finalize()))
    }

    // MARK: Lookup

    /// The record of `key`, if present.
    func find(_ key: UnsafeRawBufferPointer, hash: UInt64) -> Record? {
        let tag = CompactPresenceTable.tag(hash)
        var index = Int(truncatingIfNeeded: hash) & mask
        while true {
            let slot = slots[index]
            if slot == 0 { return nil }
            if slot >> 48 == tag {
                let pointer = CompactPresenceTable.address(slot)
                if keyEquals(pointer, key) { return Record(pointer: pointer) }
            }
            index = (index + 1) & mask
        }
    }

    func value(of record: Record) -> UserPresence {
        UserPresenceCoding.decode(encodedValue(of: record))
    }

    /// Where the record's value is, encoded by ``UserPresenceCoding``.
    func encodedValue(of record: Record) -> UnsafeRawPointer {
        UnsafeRawPointer(record.pointer + layoutSize + keyLength(record.pointer))
    }

    func key(of record: Record) -> BareJID {
        let bytes = UnsafeRawBufferPointer(start: record.pointer + layoutSize, count: keyLength(record.pointer))
        return BareJID(normalized: String(decoding: bytes, as: UTF8.self))
    }

    /// Calls `body` with the record's key bytes.
    func withKeyBytes<R>(of record: Record, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        body(UnsafeRawBufferPointer(start: record.pointer + layoutSize, count: keyLength(record.pointer)))
    }

    // MARK: Changes

    /// Inserts a key that is not present.
    @discardableResult
    func insert(_ key: UnsafeRawBufferPointer, hash: UInt64, value: UserPresence) -> Record {
        insert(key, hash: hash, valueLength: UserPresenceCoding.encodedSize(of: value)) {
            UserPresenceCoding.encode(value, to: $0)
        }
    }

    /// Inserts a key that is not present, with a value `write` encodes in `valueLength` bytes.
    private func insert(
        _ key: UnsafeRawBufferPointer, hash: UInt64, valueLength: Int, write: (UnsafeMutableRawPointer) -> Void
    ) -> Record {
        if (count + 1) * 4 > slots.count * 3 { grow() }
        let size = layoutSize + key.count + valueLength
        guard let pointer = malloc(size) else { fatalError("out of memory") }
        precondition(
            UInt64(UInt(bitPattern: pointer)) & ~CompactPresenceTable.addressMask == 0,
            "heap address above 48 bits; CompactPresenceTable needs the top 16 bits of a pointer for its tag")
        memset(pointer, 0, headerSize)
        (pointer + headerSize).storeBytes(of: UInt16(key.count), as: UInt16.self)
        (pointer + headerSize).storeBytes(of: UInt32(valueLength), toByteOffset: 2, as: UInt32.self)
        if let base = key.baseAddress { (pointer + layoutSize).copyMemory(from: base, byteCount: key.count) }
        write(pointer + layoutSize + key.count)
        recordBytes += size
        count += 1
        place(pointer, hash: hash)
        return Record(pointer: pointer)
    }

    /// Replaces a record's value; the record may move (its header moves with it).
    @discardableResult
    func replace(_ record: Record, hash: UInt64, with value: UserPresence) -> Record {
        replace(record, hash: hash, valueLength: UserPresenceCoding.encodedSize(of: value)) {
            UserPresenceCoding.encode(value, to: $0)
        }
    }

    /// Replaces a record's value with one `write` encodes in `valueLength` bytes; the record may move.
    private func replace(
        _ record: Record, hash: UInt64, valueLength newValueLength: Int, write: (UnsafeMutableRawPointer) -> Void
    ) -> Record {
        let keyLength = keyLength(record.pointer)
        let oldValueLength = valueLength(record.pointer)
        var pointer = record.pointer
        if newValueLength != oldValueLength {
            let slot = slotIndex(of: record.pointer, hash: hash)
            guard let resized = realloc(record.pointer, layoutSize + keyLength + newValueLength) else {
                fatalError("out of memory")
            }
            pointer = resized
            slots[slot] = CompactPresenceTable.slot(pointer, hash: hash)
            recordBytes += newValueLength - oldValueLength
            (pointer + headerSize).storeBytes(of: UInt32(newValueLength), toByteOffset: 2, as: UInt32.self)
        }
        write(pointer + layoutSize + keyLength)
        return Record(pointer: pointer)
    }

    /// Applies a presence update to the user's value in its encoded form (see
    /// ``UserPresenceCoding/apply(_:receivedAt:to:into:)``), inserting the user when absent: what
    /// decoding, `UserPresence.apply(_:receivedAt:)` and encoding again would store, at a fraction of the cost.
    @discardableResult
    func apply(
        _ update: PresenceUpdate, receivedAt: PresenceTime, key: UnsafeRawBufferPointer, hash: UInt64
    )
        -> Record
    {
        guard let record = find(key, hash: hash) else {
            let length = UserPresenceCoding.apply(update, receivedAt: receivedAt, to: nil, into: scratch)
            return insert(key, hash: hash, valueLength: length) { scratch.copy(length, to: $0) }
        }
        let value = UnsafeRawBufferPointer(
            start: record.pointer + layoutSize + keyLength(record.pointer), count: valueLength(record.pointer))
        let length = UserPresenceCoding.apply(update, receivedAt: receivedAt, to: value, into: scratch)
        return replace(record, hash: hash, valueLength: length) { scratch.copy(length, to: $0) }
    }

    /// Removes a record and frees it.
    func remove(_ record: Record, hash: UInt64) {
        removeSlot(slotIndex(of: record.pointer, hash: hash))
        recordBytes -= recordSize(record)
        count -= 1
        free(record.pointer)
    }

    func removeAll() {
        for slot in slots where slot != 0 { free(CompactPresenceTable.address(slot)) }
        slots = [UInt64](repeating: 0, count: 16)
        mask = 15
        count = 0
        recordBytes = 0
    }

    /// The record's size in bytes, headers included.
    func recordSize(_ record: Record) -> Int {
        layoutSize + keyLength(record.pointer) + valueLength(record.pointer)
    }

    /// Calls `body` with every record, in no particular order. `body` must not change the table.
    func forEachRecord(_ body: (Record) -> Void) {
        for slot in slots where slot != 0 { body(Record(pointer: CompactPresenceTable.address(slot))) }
    }

    /// Calls `body` with every key, in no particular order.
    func forEachKey(_ body: (BareJID) -> Void) {
        forEachRecord { body(key(of: $0)) }
    }

    /// The hash of a stored record's key, recomputed from its bytes.
    func hash(of record: Record) -> UInt64 {
        withKeyBytes(of: record) { CompactPresenceTable.hash($0) }
    }

    // MARK: Internals

    private static func tag(_ hash: UInt64) -> UInt64 { (hash >> 32) & 0xFFFF }

    private static func address(_ slot: UInt64) -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(bitPattern: UInt(slot & addressMask))!
    }

    private static func slot(_ pointer: UnsafeMutableRawPointer, hash: UInt64) -> UInt64 {
        tag(hash) << 48 | UInt64(UInt(bitPattern: pointer))
    }

    private func keyLength(_ pointer: UnsafeMutableRawPointer) -> Int {
        Int((pointer + headerSize).loadUnaligned(as: UInt16.self))
    }

    private func valueLength(_ pointer: UnsafeMutableRawPointer) -> Int {
        Int((pointer + headerSize).loadUnaligned(fromByteOffset: 2, as: UInt32.self))
    }

    private func keyEquals(_ pointer: UnsafeMutableRawPointer, _ key: UnsafeRawBufferPointer) -> Bool {
        guard keyLength(pointer) == key.count else { return false }
        guard let base = key.baseAddress else { return true }
        return memcmp(pointer + layoutSize, base, key.count) == 0
    }

    private func place(_ pointer: UnsafeMutableRawPointer, hash: UInt64) {
        var index = Int(truncatingIfNeeded: hash) & mask
        while slots[index] != 0 { index = (index + 1) & mask }
        slots[index] = CompactPresenceTable.slot(pointer, hash: hash)
    }

    private func slotIndex(of pointer: UnsafeMutableRawPointer, hash: UInt64) -> Int {
        let wanted = CompactPresenceTable.slot(pointer, hash: hash)
        var index = Int(truncatingIfNeeded: hash) & mask
        while slots[index] != wanted { index = (index + 1) & mask }
        return index
    }

    /// Backward-shift deletion: later entries of the probe chain move up so that lookups never need tombstones.
    private func removeSlot(_ slot: Int) {
        var hole = slot
        var next = (hole + 1) & mask
        while slots[next] != 0 {
            let pointer = CompactPresenceTable.address(slots[next])
            let ideal = Int(truncatingIfNeeded: hash(of: Record(pointer: pointer))) & mask
            // The entry at `next` may fill the hole when the hole lies between its ideal slot and `next`.
            if (hole - ideal) & mask < (next - ideal) & mask {
                slots[hole] = slots[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        slots[hole] = 0
    }

    /// Makes room for `users` records without growing on the way (a restore knows how many come).
    func reserveCapacity(_ users: Int) {
        var size = slots.count
        while users * 4 > size * 3 { size *= 2 }
        if size > slots.count { rehash(size: size) }
    }

    private func grow() { rehash(size: slots.count * 2) }

    private func rehash(size: Int) {
        let old = slots
        slots = [UInt64](repeating: 0, count: size)
        mask = slots.count - 1
        for slot in old where slot != 0 {
            let pointer = CompactPresenceTable.address(slot)
            place(pointer, hash: hash(of: Record(pointer: pointer)))
        }
    }
}
