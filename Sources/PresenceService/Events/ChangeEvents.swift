import NIOCore
import PresenceModel

/// The `presence` event of each recent change, encoded once for all the streams that write it.
///
/// A change to a person watched by several streams is the same event on each (the same id, the same answer), so
/// the first stream to write it looks the answer up and encodes it, and the others copy its bytes. A slot per
/// change number, in a ring of ``capacity``: a stream that writes a change after the ring has moved past it
/// encodes the event again itself.
///
/// A cached event is as fresh as a stream's own would be. A stream writes change `N` of a person only while `N` is
/// that person's latest change marked on it, and an event encoded for `N` reads the answer as it was at or after
/// change `N`; the person's next change is marked on the stream and written after it.
final class ChangeEvents: Sendable {
    /// How many recent changes keep their event: a few hundred bytes each, so at most about 300 KiB; a fifth of
    /// a second of changes at 5,000 a second, long after every stream awake has written them.
    static let capacity = 1024

    private let slots = Locked([Slot](repeating: Slot(), count: ChangeEvents.capacity))

    private struct Slot {
        var sequence: UInt64 = 0
        var event: ByteBuffer?
    }

    /// Change `sequence`'s event, encoded by `encode` unless a stream encoded it already.
    func event(_ sequence: UInt64, encode: () -> ByteBuffer) -> ByteBuffer {
        let index = Int(sequence % UInt64(Self.capacity))
        if let cached = slots.withLock({ $0[index].sequence == sequence ? $0[index].event : nil }) { return cached }
        let event = encode()
        slots.withLock { slots in
            if slots[index].sequence < sequence { slots[index] = Slot(sequence: sequence, event: event) }
        }
        return event
    }
}
