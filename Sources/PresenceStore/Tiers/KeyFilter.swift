import PresenceModel

/// A Bloom filter of the users a disk tier may hold: a "no" is certain, so an update of a user the tier never
/// had costs no disk read; a "maybe" (about 1% wrong at its capacity) costs one.
///
/// Ten bits and seven probes per user of capacity, all seven in one 64-byte block (one cache miss per key,
/// measured on a restart of a million users). Hashes are the process's own (`Hasher`), so the filter is built anew
/// each time a tier opens, from its keys.
package struct KeyFilter: Sendable {
    private var words: [UInt64]
    private let mask: Int
    /// Users the filter was sized for; past it the wrong "maybe"s grow, and the tier rebuilds it bigger.
    package let capacity: Int
    package private(set) var inserted = 0

    private static let probes = 7

    package init(capacity: Int) {
        self.capacity = max(capacity, 1 << 16)
        var bits = 512
        while bits < self.capacity * 10 { bits *= 2 }
        words = [UInt64](repeating: 0, count: bits / 64)
        mask = bits - 1
    }

    package var isOverCapacity: Bool { inserted > capacity }

    package mutating func insert(_ key: BareJID) { insert(hash: key.hashValue) }

    /// Inserts the key whose `hashValue` is `hash` (a caller that needs the hash too computes it once).
    package mutating func insert(hash: Int) {
        inserted += 1
        forEachBit(hash) { words[$0 >> 6] |= 1 << UInt64($0 & 63) }
    }

    package func mayContain(_ key: BareJID) -> Bool {
        var all = true
        forEachBit(key.hashValue) { bit in
            if words[bit >> 6] & (1 << UInt64(bit & 63)) == 0 { all = false }
        }
        return all
    }

    /// A 512-bit block from the hash's low bits, then double hashing inside it (Kirsch and Mitzenmacher) over the
    /// high half.
    @inline(__always)
    private func forEachBit(_ hashValue: Int, _ body: (Int) -> Void) {
        let hash = UInt64(bitPattern: Int64(hashValue))
        let block = Int(truncatingIfNeeded: hash) & mask & ~511
        let first = Int(truncatingIfNeeded: hash >> 32)
        let second = Int(truncatingIfNeeded: hash >> 48) | 1
        for probe in 0 ..< Self.probes { body(block | ((first &+ probe &* second) & 511)) }
    }
}
