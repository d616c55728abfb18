import PresenceModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension UserPresenceCoding {
    /// Applies one presence update to an encoded value, writing the encoded result: what
    /// `UserPresence.apply(_:receivedAt:)` does (RFC 6121 §4.7), byte for byte the encoding of its result, without
    /// materialising the user as Swift values.
    ///
    /// Ingest applies every update to a stored user; decoding the user into arrays and strings, applying, and
    /// encoding again cost more than parsing the stanza did (Documentation/Benchmarks.md, ingest). This copies the
    /// untouched entries as bytes and writes only the new one. `EncodedApplyTests` check, over random update
    /// sequences, that the bytes equal encoding the result of `UserPresence.apply`: the aggregation rules stay
    /// defined in `UserPresence`, and this is held to them.
    ///
    /// - Parameters:
    ///   - source: the encoded value (its bytes, whose count sizes the result), or nil for a user with nothing
    ///     applied yet.
    ///   - scratch: grown as needed; on return its first `result` bytes are the new encoded value.
    /// - Returns: the length of the new encoded value.
    static func apply(
        _ update: PresenceUpdate, receivedAt: PresenceTime, to source: UnsafeRawBufferPointer?,
        into scratch: ScratchBuffer
    ) -> Int {
        var resource = update.from.resource ?? ""
        var status = update.details.status
        return resource.withUTF8 { resourceBytes in
            withStatusBytes(&status) { statusBytes in
                apply(
                    update, receivedAt: receivedAt, resource: UnsafeRawBufferPointer(resourceBytes),
                    status: statusBytes, to: source, into: scratch)
            }
        }
    }

    private static func withStatusBytes<R>(_ status: inout String?, _ body: (UnsafeRawBufferPointer?) -> R) -> R {
        guard status != nil else { return body(nil) }
        return status!.withUTF8 { bytes in
            body(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes).prefix(maximumStatusBytes)))
        }
    }

    private static func apply(
        _ update: PresenceUpdate, receivedAt: PresenceTime, resource: UnsafeRawBufferPointer,
        status: UnsafeRawBufferPointer?, to sourceBytes: UnsafeRawBufferPointer?, into scratch: ScratchBuffer
    ) -> Int {
        let source = sourceBytes?.baseAddress
        let oldSequence = source?.loadUnaligned(as: UInt32.self) ?? 0
        let availableCount = source.map { Int($0.load(fromByteOffset: 4, as: UInt8.self)) } ?? 0
        let hasLast = source.map { $0.load(fromByteOffset: 5, as: UInt8.self) != 0 } ?? false
        let sequence = oldSequence &+ 1
        let updatedAt = (update.delayedAt ?? receivedAt).millisecondsSinceEpoch
        let newEntrySize = entryFixedSize + resource.count + (status?.count ?? 0)

        // The entries as they are, walked once below; the result is at most the value plus the new entry.
        let entries = source.map { EncodedEntries(start: $0 + headerSize, count: availableCount) }
        let destination = scratch.reserve((sourceBytes?.count ?? headerSize) + newEntrySize)
        var cursor = destination + headerSize
        var outputCount = 0

        switch update.availability {
        case .available:
            var replaced = false
            // At the resource limit a new resource replaces the least recently updated one.
            var evicted = -1
            if availableCount == UserPresence.maximumResources,
                !(entries?.contains(resource: resource) ?? false)
            {
                evicted = entries!.oldestIndex()
            }
            let lastStart = entries?.forEach { index, entry, size in
                if index == evicted { return }
                if !replaced && resourceEquals(entry, resource) {
                    writeEntry(&cursor, updatedAt, sequence, update.details, resource, status)
                    replaced = true
                } else {
                    cursor.copyMemory(from: entry, byteCount: size)
                    cursor += size
                }
                outputCount += 1
            }
            if !replaced {
                writeEntry(&cursor, updatedAt, sequence, update.details, resource, status)
                outputCount += 1
            }
            if hasLast, let lastStart {
                let lastSize = entrySize(at: lastStart)
                cursor.copyMemory(from: lastStart, byteCount: lastSize)
                cursor += lastSize
            }
        case .unavailable:
            var removed = false
            // From the bare JID every resource goes; otherwise the one named.
            if update.from.resource != nil {
                entries?.forEach { _, entry, size in
                    if !removed && resourceEquals(entry, resource) {
                        removed = true
                        return
                    }
                    cursor.copyMemory(from: entry, byteCount: size)
                    cursor += size
                    outputCount += 1
                }
            }
            writeEntry(&cursor, updatedAt, sequence, update.details, resource, status)
        }
        destination.storeBytes(of: sequence, as: UInt32.self)
        destination.storeBytes(of: UInt8(truncatingIfNeeded: outputCount), toByteOffset: 4, as: UInt8.self)
        destination.storeBytes(
            of: hasLast || update.availability == .unavailable ? 1 : 0, toByteOffset: 5, as: UInt8.self)
        return cursor - destination
    }

    private static func writeEntry(
        _ cursor: inout UnsafeMutableRawPointer, _ updatedAt: Int64, _ sequence: UInt32, _ details: PresenceDetails,
        _ resource: UnsafeRawBufferPointer, _ status: UnsafeRawBufferPointer?
    ) {
        cursor.storeBytes(of: updatedAt, as: Int64.self)
        cursor.storeBytes(of: sequence, toByteOffset: 8, as: UInt32.self)
        cursor.storeBytes(of: details.show.map(showCode) ?? 0, toByteOffset: 12, as: UInt8.self)
        cursor.storeBytes(of: details.priority, toByteOffset: 13, as: Int8.self)
        cursor.storeBytes(of: details.attendance.map(attendanceCode) ?? 0, toByteOffset: 14, as: UInt8.self)
        cursor.storeBytes(of: UInt16(resource.count), toByteOffset: 15, as: UInt16.self)
        cursor.storeBytes(of: status.map { UInt16($0.count) } ?? noStatus, toByteOffset: 17, as: UInt16.self)
        cursor += entryFixedSize
        if let base = resource.baseAddress { cursor.copyMemory(from: base, byteCount: resource.count) }
        cursor += resource.count
        if let status {
            if let base = status.baseAddress { cursor.copyMemory(from: base, byteCount: status.count) }
            cursor += status.count
        }
    }

    /// The size of the encoded entry at `entry`.
    static func entrySize(at entry: UnsafeRawPointer) -> Int {
        let resourceLength = Int(entry.loadUnaligned(fromByteOffset: 15, as: UInt16.self))
        let statusLength = entry.loadUnaligned(fromByteOffset: 17, as: UInt16.self)
        return entryFixedSize + resourceLength + (statusLength == noStatus ? 0 : Int(statusLength))
    }

    private static func resourceEquals(_ entry: UnsafeRawPointer, _ resource: UnsafeRawBufferPointer) -> Bool {
        let length = Int(entry.loadUnaligned(fromByteOffset: 15, as: UInt16.self))
        guard length == resource.count else { return false }
        guard let base = resource.baseAddress else { return true }
        return memcmp(entry + entryFixedSize, base, length) == 0
    }

    /// The available entries of an encoded value, walked in order.
    private struct EncodedEntries {
        let start: UnsafeRawPointer
        let count: Int

        /// Calls `body` with each entry's index, start and size; returns where the entries end (the last
        /// unavailable entry, if any, starts there).
        @discardableResult
        func forEach(_ body: (Int, UnsafeRawPointer, Int) -> Void) -> UnsafeRawPointer {
            var cursor = start
            for index in 0 ..< count {
                let size = entrySize(at: cursor)
                body(index, cursor, size)
                cursor += size
            }
            return cursor
        }

        func contains(resource: UnsafeRawBufferPointer) -> Bool {
            var found = false
            forEach { _, entry, _ in if !found && resourceEquals(entry, resource) { found = true } }
            return found
        }

        /// The index of the least recently updated entry, as `UserPresence` chooses it: by time, then by arrival,
        /// the first of equals.
        func oldestIndex() -> Int {
            var oldest: (index: Int, entry: UnsafeRawPointer)?
            forEach { index, entry, _ in
                // Replace when the current choice is newer than this entry.
                if oldest.map({ isNewer($0.entry, than: entry) }) ?? true { oldest = (index, entry) }
            }
            return oldest?.index ?? -1
        }
    }
}

/// A growable byte buffer reused across writes, owned by one table under its owner's lock.
///
/// A class held in a `let`: a `var` struct inside the table would be an `inout` access to a class property on
/// every update, which Swift checks for exclusivity at run time (`swift_beginAccess` showed in the ingest profile).
final class ScratchBuffer {
    private var storage: UnsafeMutableRawPointer
    private var capacity: Int

    init(capacity: Int = 1024) {
        self.capacity = capacity
        storage = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    }

    deinit { storage.deallocate() }

    /// Room for at least `count` bytes; the contents are not kept.
    func reserve(_ count: Int) -> UnsafeMutableRawPointer {
        if count > capacity {
            storage.deallocate()
            capacity = max(count, capacity * 2)
            storage = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        }
        return storage
    }

    /// Copies the first `count` bytes to `destination`.
    func copy(_ count: Int, to destination: UnsafeMutableRawPointer) {
        destination.copyMemory(from: storage, byteCount: count)
    }
}
