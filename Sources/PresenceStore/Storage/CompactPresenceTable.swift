#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A hash table from bare JID to ``UserPresence`` that keeps each user in one allocation: the JID's bytes and
/// the compactly encoded value side by side (``UserPresenceCoding``).
///
/// Measured at 1M users: a `[BareJID: UserPresence]` costs about 350 bytes per user; this table about a third
/// of that. Open addressing with linear probing over 8-byte slots (a 32-bit hash tag and a record index) and a
/// dense array of record pointers; removal shifts probe chains back instead of leaving tombstones, and moves the
/// last record into the hole so that records stay dense (``onMove`` tells an owner that tracks record indices).
///
/// Not thread-safe: owners serialise access (``DictionaryMemoryStorage`` stripes it under locks).
final class CompactPresenceTable {
    /// Record layout: u32 hash · u16 key length · u16 reserved · u32 value length · key bytes · value bytes.
    private static let recordHeaderSize = 12
    /// glibc's per-allocation overhead, for the byte estimate.
    static let allocationOverhead = 8

    private var records: [UnsafeMutableRawPointer] = []
    private var slots: [UInt64]
    private var mask: Int
    /// Bytes in records, headers included.
    private(set) var recordBytes = 0

    /// Called with (from, to) when a record changes index because another was removed.
    var onMove: ((Int, Int) -> Void)?

    init(minimumCapacity: Int = 16) {
        var capacity = 16
        while capacity * 3 / 4 < minimumCapacity { capacity *= 2 }
        slots = [UInt64](repeating: 0, count: capacity)
        mask = capacity - 1
    }

    deinit {
        for record in records { free(record) }
    }

    var count: Int { records.count }

    /// Estimated heap bytes: records with allocator overhead, the slot table and the record array.
    var estimatedBytes: Int {
        recordBytes + records.count * CompactPresenceTable.allocationOverhead + slots.count * 8 + records.capacity * 8
    }

    // MARK: Hashing

    /// The 64-bit hash of a key's bytes (SipHash, randomly seeded per process, so hostile JIDs cannot aim at
    /// one probe chain). Owners use high bits to pick a stripe; the table uses the low 32.
    static func hash(_ key: UnsafeRawBufferPointer) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(bytes: key)
        return UInt64(bitPattern: Int64(hasher.finalize()))
    }

    // MARK: Lookup

    /// The record index of `key`, if present.
    func find(_ key: UnsafeRawBufferPointer, hash: UInt64) -> Int? {
        let tag = UInt32(truncatingIfNeeded: hash)
        var index = Int(tag) & mask
        while true {
            let slot = slots[index]
            if slot == 0 { return nil }
            if UInt32(truncatingIfNeeded: slot >> 32) == tag {
                let record = Int(truncatingIfNeeded: slot & 0xFFFF_FFFF) - 1
                if keyEquals(records[record], key) { return record }
            }
            index = (index + 1) & mask
        }
    }

    func value(at record: Int) -> UserPresence {
        let pointer = records[record]
        let keyLength = Int(pointer.load(fromByteOffset: 4, as: UInt16.self))
        return UserPresenceCoding.decode(pointer + CompactPresenceTable.recordHeaderSize + keyLength)
    }

    func key(at record: Int) -> BareJID {
        let pointer = records[record]
        let keyLength = Int(pointer.load(fromByteOffset: 4, as: UInt16.self))
        let bytes = UnsafeRawBufferPointer(start: pointer + CompactPresenceTable.recordHeaderSize, count: keyLength)
        return BareJID(normalized: String(decoding: bytes, as: UTF8.self))
    }

    /// The size of one record in bytes, the cost an evicting owner charges for it.
    func recordSize(at record: Int) -> Int {
        let pointer = records[record]
        return CompactPresenceTable.recordHeaderSize + Int(pointer.load(fromByteOffset: 4, as: UInt16.self))
            + Int(pointer.load(fromByteOffset: 8, as: UInt32.self))
    }

    // MARK: Changes

    /// Inserts a key that is not present; returns its record index.
    @discardableResult
    func insert(_ key: UnsafeRawBufferPointer, hash: UInt64, value: UserPresence) -> Int {
        if (records.count + 1) * 4 > slots.count * 3 { grow() }
        let record = records.count
        records.append(makeRecord(key, hash: hash, value: value))
        placeSlot(tag: UInt32(truncatingIfNeeded: hash), record: record)
        return record
    }

    /// Replaces the value of an existing record.
    func replace(at record: Int, with value: UserPresence) {
        let pointer = records[record]
        let keyLength = Int(pointer.load(fromByteOffset: 4, as: UInt16.self))
        let oldValueLength = Int(pointer.load(fromByteOffset: 8, as: UInt32.self))
        let newValueLength = UserPresenceCoding.encodedSize(of: value)
        var target = pointer
        if newValueLength != oldValueLength {
            let size = CompactPresenceTable.recordHeaderSize + keyLength + newValueLength
            guard let resized = realloc(pointer, size) else { fatalError("out of memory") }
            target = resized
            records[record] = resized
            recordBytes += newValueLength - oldValueLength
            target.storeBytes(of: UInt32(newValueLength), toByteOffset: 8, as: UInt32.self)
        }
        UserPresenceCoding.encode(value, to: target + CompactPresenceTable.recordHeaderSize + keyLength)
    }

    /// Removes a record; the last record moves into its index.
    func remove(at record: Int) {
        let pointer = records[record]
        let tag = pointer.load(as: UInt32.self)
        removeSlot(tag: tag, record: record)
        recordBytes -= recordSizeFromHeader(pointer)
        free(pointer)
        let last = records.count - 1
        if record != last {
            let moved = records[last]
            records[record] = moved
            retargetSlot(tag: moved.load(as: UInt32.self), from: last, to: record)
            onMove?(last, record)
        }
        records.removeLast()
    }

    func removeAll() {
        for record in records { free(record) }
        records.removeAll()
        recordBytes = 0
        slots = [UInt64](repeating: 0, count: 16)
        mask = 15
    }

    /// Calls `body` with every key, in no particular order.
    func forEachKey(_ body: (BareJID) -> Void) {
        for record in records.indices { body(key(at: record)) }
    }

    // MARK: Internals

    private func makeRecord(_ key: UnsafeRawBufferPointer, hash: UInt64, value: UserPresence) -> UnsafeMutableRawPointer {
        let valueLength = UserPresenceCoding.encodedSize(of: value)
        let size = CompactPresenceTable.recordHeaderSize + key.count + valueLength
        guard let pointer = malloc(size) else { fatalError("out of memory") }
        pointer.storeBytes(of: UInt32(truncatingIfNeeded: hash), as: UInt32.self)
        pointer.storeBytes(of: UInt16(key.count), toByteOffset: 4, as: UInt16.self)
        pointer.storeBytes(of: 0, toByteOffset: 6, as: UInt16.self)
        pointer.storeBytes(of: UInt32(valueLength), toByteOffset: 8, as: UInt32.self)
        if let base = key.baseAddress { (pointer + CompactPresenceTable.recordHeaderSize).copyMemory(from: base, byteCount: key.count) }
        UserPresenceCoding.encode(value, to: pointer + CompactPresenceTable.recordHeaderSize + key.count)
        recordBytes += size
        return pointer
    }

    private func recordSizeFromHeader(_ pointer: UnsafeMutableRawPointer) -> Int {
        CompactPresenceTable.recordHeaderSize + Int(pointer.load(fromByteOffset: 4, as: UInt16.self))
            + Int(pointer.load(fromByteOffset: 8, as: UInt32.self))
    }

    private func keyEquals(_ pointer: UnsafeMutableRawPointer, _ key: UnsafeRawBufferPointer) -> Bool {
        guard Int(pointer.load(fromByteOffset: 4, as: UInt16.self)) == key.count else { return false }
        guard let base = key.baseAddress else { return true }
        return memcmp(pointer + CompactPresenceTable.recordHeaderSize, base, key.count) == 0
    }

    private func placeSlot(tag: UInt32, record: Int) {
        var index = Int(tag) & mask
        while slots[index] != 0 { index = (index + 1) & mask }
        slots[index] = UInt64(tag) << 32 | UInt64(record + 1)
    }

    private func slotIndex(tag: UInt32, record: Int) -> Int {
        let wanted = UInt64(tag) << 32 | UInt64(record + 1)
        var index = Int(tag) & mask
        while slots[index] != wanted { index = (index + 1) & mask }
        return index
    }

    private func retargetSlot(tag: UInt32, from: Int, to: Int) {
        slots[slotIndex(tag: tag, record: from)] = UInt64(tag) << 32 | UInt64(to + 1)
    }

    /// Backward-shift deletion: later entries of the probe chain move up so that lookups never need tombstones.
    private func removeSlot(tag: UInt32, record: Int) {
        var hole = slotIndex(tag: tag, record: record)
        var next = (hole + 1) & mask
        while slots[next] != 0 {
            let ideal = Int(UInt32(truncatingIfNeeded: slots[next] >> 32)) & mask
            // The entry at `next` may fill the hole when its ideal slot is not cyclically within (hole, next].
            let distanceToNext = (next - ideal) & mask
            let distanceToHole = (hole - ideal) & mask
            if distanceToHole < distanceToNext {
                slots[hole] = slots[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        slots[hole] = 0
    }

    private func grow() {
        let capacity = slots.count * 2
        slots = [UInt64](repeating: 0, count: capacity)
        mask = capacity - 1
        for (record, pointer) in records.enumerated() {
            placeSlot(tag: pointer.load(as: UInt32.self), record: record)
        }
    }
}
