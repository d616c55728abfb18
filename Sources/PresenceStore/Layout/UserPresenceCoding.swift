import PresenceModel

/// A compact byte encoding of `UserPresence`, for storages that keep millions of users.
///
/// A `UserPresence` as Swift values costs about 350 bytes per user in a `Dictionary` (strings, arrays and their
/// allocations); encoded next to its key in one allocation it costs about a third of that. Layout, unaligned and
/// in native byte order (the encoding never leaves the process):
///
///     u32 sequence · u8 availableCount · u8 hasLastUnavailable
///     per entry (available resources, then the last unavailable one):
///       i64 updatedAt · u32 sequence · u8 show · i8 priority · u8 attendance ·
///       u16 resourceLength · u16 statusLength (0xFFFF: no status) · resource bytes · status bytes
enum UserPresenceCoding {
    static let headerSize = 6
    static let entryFixedSize = 8 + 4 + 3 + 2 + 2
    static let noStatus = UInt16.max

    /// The longest status the encoding can hold.
    static let maximumStatusBytes = PresenceDetails.maximumStatusBytes

    /// The number of bytes `encode` writes for `presence`.
    static func encodedSize(of presence: UserPresence) -> Int {
        var size = headerSize
        for entry in presence.availableResources { size += entrySize(entry) }
        if let last = presence.lastUnavailable { size += entrySize(last) }
        return size
    }

    private static func entrySize(_ entry: ResourcePresence) -> Int {
        entryFixedSize + entry.resource.utf8.count + min(entry.details.status?.utf8.count ?? 0, maximumStatusBytes)
    }

    /// Writes `presence` at `destination`, which has room for `encodedSize(of:)` bytes.
    static func encode(_ presence: UserPresence, to destination: UnsafeMutableRawPointer) {
        var cursor = destination
        cursor.storeBytes(of: presence.sequence, as: UInt32.self)
        cursor.storeBytes(
            of: UInt8(truncatingIfNeeded: presence.availableResources.count), toByteOffset: 4, as: UInt8.self)
        cursor.storeBytes(of: presence.lastUnavailable == nil ? 0 : 1, toByteOffset: 5, as: UInt8.self)
        cursor += headerSize
        for entry in presence.availableResources { encode(entry, &cursor) }
        if let last = presence.lastUnavailable { encode(last, &cursor) }
    }

    private static func encode(_ entry: ResourcePresence, _ cursor: inout UnsafeMutableRawPointer) {
        cursor.storeBytes(of: entry.updatedAt.millisecondsSinceEpoch, as: Int64.self)
        cursor.storeBytes(of: entry.sequence, toByteOffset: 8, as: UInt32.self)
        cursor.storeBytes(of: entry.details.show.map(showCode) ?? 0, toByteOffset: 12, as: UInt8.self)
        cursor.storeBytes(of: entry.details.priority, toByteOffset: 13, as: Int8.self)
        cursor.storeBytes(of: entry.details.attendance.map(attendanceCode) ?? 0, toByteOffset: 14, as: UInt8.self)
        var resource = entry.resource
        var status = entry.details.status
        let statusLength = status.map { min($0.utf8.count, maximumStatusBytes) }
        cursor.storeBytes(of: UInt16(resource.utf8.count), toByteOffset: 15, as: UInt16.self)
        cursor.storeBytes(of: statusLength.map(UInt16.init) ?? noStatus, toByteOffset: 17, as: UInt16.self)
        cursor += entryFixedSize
        resource.withUTF8 { bytes in
            if let base = bytes.baseAddress { cursor.copyMemory(from: base, byteCount: bytes.count) }
            cursor += bytes.count
        }
        if let statusLength {
            status!.withUTF8 { bytes in
                if let base = bytes.baseAddress { cursor.copyMemory(from: base, byteCount: statusLength) }
            }
            cursor += statusLength
        }
    }

    /// Reads a value written by `encode`.
    static func decode(_ source: UnsafeRawPointer) -> UserPresence {
        var presence = UserPresence()
        presence.sequence = source.loadUnaligned(as: UInt32.self)
        let availableCount = Int(source.load(fromByteOffset: 4, as: UInt8.self))
        let hasLast = source.load(fromByteOffset: 5, as: UInt8.self) != 0
        var cursor = source + headerSize
        presence.availableResources.reserveCapacity(availableCount)
        for _ in 0 ..< availableCount { presence.availableResources.append(decodeEntry(&cursor)) }
        if hasLast { presence.lastUnavailable = decodeEntry(&cursor) }
        return presence
    }

    private static func decodeEntry(_ cursor: inout UnsafeRawPointer) -> ResourcePresence {
        let updatedAt = cursor.loadUnaligned(as: Int64.self)
        let sequence = cursor.loadUnaligned(fromByteOffset: 8, as: UInt32.self)
        let show = cursor.load(fromByteOffset: 12, as: UInt8.self)
        let priority = cursor.load(fromByteOffset: 13, as: Int8.self)
        let attendance = cursor.load(fromByteOffset: 14, as: UInt8.self)
        let resourceLength = Int(cursor.loadUnaligned(fromByteOffset: 15, as: UInt16.self))
        let statusLength = cursor.loadUnaligned(fromByteOffset: 17, as: UInt16.self)
        cursor += entryFixedSize
        let resource = String(decoding: UnsafeRawBufferPointer(start: cursor, count: resourceLength), as: UTF8.self)
        cursor += resourceLength
        var status: String?
        if statusLength != noStatus {
            // A cut status may end inside a character; decoding repairs that end with U+FFFD, never crashes.
            status = String(decoding: UnsafeRawBufferPointer(start: cursor, count: Int(statusLength)), as: UTF8.self)
            cursor += Int(statusLength)
        }
        let details = PresenceDetails(
            show: show == 0 ? nil : PresenceShow.allCases[Int(show) - 1], status: status, priority: priority,
            attendance: attendance == 0 ? nil : Attendance.allCases[Int(attendance) - 1])
        return ResourcePresence(
            resource: resource, details: details, updatedAt: PresenceTime(millisecondsSinceEpoch: updatedAt),
            sequence: sequence)
    }

    /// Calls `body` with the resource `UserPresence.status` would show for the value at `source`, read in place:
    /// the available entry of highest priority, the newest among equals (as ``ResourcePresence`` orders them:
    /// time, then sequence), else the last unavailable one; nil when there is neither.
    static func withShown<R>(_ source: UnsafeRawPointer, _ body: (ShownPresence?) -> R) -> R {
        let availableCount = Int(source.load(fromByteOffset: 4, as: UInt8.self))
        let hasLast = source.load(fromByteOffset: 5, as: UInt8.self) != 0
        var cursor = source + headerSize
        guard availableCount > 0 else { return body(hasLast ? shown(at: cursor, isAvailable: false) : nil) }
        var best = cursor
        for _ in 1 ..< availableCount {
            cursor += entrySize(at: cursor)
            let priority = cursor.load(fromByteOffset: 13, as: Int8.self)
            let bestPriority = best.load(fromByteOffset: 13, as: Int8.self)
            if priority > bestPriority || (priority == bestPriority && isNewer(cursor, than: best)) { best = cursor }
        }
        return body(shown(at: best, isAvailable: true))
    }

    /// ``ResourcePresence``'s order, on encoded entries: the later time, then the later sequence (wrap-around
    /// safe).
    static func isNewer(_ entry: UnsafeRawPointer, than other: UnsafeRawPointer) -> Bool {
        let time = entry.loadUnaligned(as: Int64.self)
        let otherTime = other.loadUnaligned(as: Int64.self)
        if time != otherTime { return time > otherTime }
        let sequence = entry.loadUnaligned(fromByteOffset: 8, as: UInt32.self)
        return Int32(bitPattern: sequence &- other.loadUnaligned(fromByteOffset: 8, as: UInt32.self)) > 0
    }

    private static func shown(at entry: UnsafeRawPointer, isAvailable: Bool) -> ShownPresence {
        let show = entry.load(fromByteOffset: 12, as: UInt8.self)
        let attendance = entry.load(fromByteOffset: 14, as: UInt8.self)
        let resourceLength = Int(entry.loadUnaligned(fromByteOffset: 15, as: UInt16.self))
        let statusLength = entry.loadUnaligned(fromByteOffset: 17, as: UInt16.self)
        let resource = entry + entryFixedSize
        return ShownPresence(
            isAvailable: isAvailable, show: show == 0 ? nil : PresenceShow.allCases[Int(show) - 1],
            priority: entry.load(fromByteOffset: 13, as: Int8.self),
            attendance: attendance == 0 ? nil : Attendance.allCases[Int(attendance) - 1],
            updatedAt: PresenceTime(millisecondsSinceEpoch: entry.loadUnaligned(as: Int64.self)),
            resource: UnsafeRawBufferPointer(start: resource, count: resourceLength),
            status: statusLength == noStatus
                ? nil : UnsafeRawBufferPointer(start: resource + resourceLength, count: Int(statusLength)))
    }

    static func showCode(_ show: PresenceShow) -> UInt8 {
        UInt8(PresenceShow.allCases.firstIndex(of: show)! + 1)
    }

    static func attendanceCode(_ attendance: Attendance) -> UInt8 {
        UInt8(Attendance.allCases.firstIndex(of: attendance)! + 1)
    }
}
