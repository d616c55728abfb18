import Foundation
import NIOCore
import Synchronization

/// The time on the monotonic clock, in nanoseconds: what a change's status carries and its event is timed against.
public func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// What the readers of one server's streams have seen.
public final class Latencies: Sendable {
    public let samples = Mutex<[UInt64]>([])
    public let events = Atomic<Int>(0)
    public let snapshotsDone = Atomic<Int>(0)
    /// Whether the measured window is on: change-to-delivery times are kept only then.
    public let recording = Atomic<Bool>(false)

    public init() {}
}

/// Reads one event stream: counts events, and times each delivered `t=<ns>` status against now. Scans the bytes
/// as they arrive without copying them (the reader must cost far less than the service it measures); the last
/// bytes of a read are carried over so that a marker split between two reads is still found.
public final class StreamReader: ChannelInboundHandler {
    public typealias InboundIn = ByteBuffer
    private static let event = Array("event: presence".utf8)
    private static let marker = Array("\"status\":\"t=".utf8)
    private var carry: [UInt8] = []
    private var snapshotLeft: Int
    private let latencies: Latencies

    public init(snapshot: Int, into latencies: Latencies) {
        snapshotLeft = snapshot
        self.latencies = latencies
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        let now = monotonicNanoseconds()
        var events = 0
        var found: [UInt64] = []
        func scan(_ bytes: UnsafeRawBufferPointer) -> Int {
            var index = 0
            var consumed = 0
            let count = bytes.count
            while index < count {
                let byte = bytes[index]
                if byte == 101, Self.matches(Self.event, in: bytes, at: index) {  // "e"
                    events += 1
                    index += Self.event.count
                    consumed = index
                    continue
                }
                if byte == 34, Self.matches(Self.marker, in: bytes, at: index) {  // "\""
                    var position = index + Self.marker.count
                    var value: UInt64 = 0
                    while position < count, bytes[position] >= 48, bytes[position] <= 57 {
                        value = value * 10 + UInt64(bytes[position] - 48)
                        position += 1
                    }
                    if position == count { break }  // the number continues in the next read
                    if value > 0 && value <= now { found.append(now - value) }
                    index = position
                    consumed = index
                    continue
                }
                index += 1
            }
            return max(consumed, count - 64)
        }
        if carry.isEmpty {
            let consumed = buffer.withUnsafeReadableBytes { scan($0) }
            buffer.withUnsafeReadableBytes { carry = Array($0[consumed...]) }
        } else {
            var joined = carry
            buffer.withUnsafeReadableBytes { joined += $0 }
            let consumed = joined.withUnsafeBytes { scan($0) }
            carry = Array(joined[consumed...])
        }
        if snapshotLeft > 0 {
            snapshotLeft -= events
            if snapshotLeft <= 0 { latencies.snapshotsDone.add(1, ordering: .relaxed) }
            return
        }
        latencies.events.add(events, ordering: .relaxed)
        if latencies.recording.load(ordering: .relaxed), !found.isEmpty {
            latencies.samples.withLock { $0 += found }
        }
    }

    private static func matches(_ pattern: [UInt8], in bytes: UnsafeRawBufferPointer, at index: Int) -> Bool {
        guard index + pattern.count <= bytes.count else { return false }
        for offset in 0 ..< pattern.count where bytes[index + offset] != pattern[offset] { return false }
        return true
    }
}
