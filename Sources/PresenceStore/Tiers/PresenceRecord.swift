import PresenceModel

/// One user's value as a disk tier keeps it: the storages' compact encoding (``UserPresenceCoding``), with a
/// decoder that checks every length and code before it reads, because a file on disk can be cut short,
/// corrupted or written by something else.
///
/// The encoding is little-endian on every machine this package builds for (x86-64 and ARM64 Linux); a disk tier
/// records the byte order it was written in and refuses a file of the other one.
package enum PresenceRecord {
    /// The bytes of `presence`.
    package static func encode(_ presence: UserPresence) -> [UInt8] {
        let size = UserPresenceCoding.encodedSize(of: presence)
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            UserPresenceCoding.encode(presence, to: UnsafeMutableRawPointer(buffer.baseAddress!))
            initialized = size
        }
    }

    /// The presence in `bytes`, or nil when they are not one ``encode(_:)`` wrote (wrong length, a code out of
    /// range): a damaged record is refused, never read past its end.
    package static func decode(_ bytes: UnsafeRawBufferPointer) -> UserPresence? {
        guard isValid(bytes), let base = bytes.baseAddress else { return nil }
        return UserPresenceCoding.decode(base)
    }

    private static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count >= UserPresenceCoding.headerSize else { return false }
        let availableCount = Int(bytes[4])
        let hasLast = bytes[5]
        guard hasLast <= 1 else { return false }
        var offset = UserPresenceCoding.headerSize
        for _ in 0 ..< availableCount + Int(hasLast) {
            guard bytes.count - offset >= UserPresenceCoding.entryFixedSize else { return false }
            let show = Int(bytes[offset + 12])
            let attendance = Int(bytes[offset + 14])
            guard show <= PresenceShow.allCases.count, attendance <= Attendance.allCases.count else { return false }
            let resourceLength = Int(bytes.loadUnaligned(fromByteOffset: offset + 15, as: UInt16.self))
            let statusLength = bytes.loadUnaligned(fromByteOffset: offset + 17, as: UInt16.self)
            let length =
                resourceLength + (statusLength == UserPresenceCoding.noStatus ? 0 : Int(statusLength))
            offset += UserPresenceCoding.entryFixedSize
            guard bytes.count - offset >= length else { return false }
            offset += length
        }
        return offset == bytes.count
    }
}
