import NIOCore
import PresenceModel

/// The `presence` event of each recent change, encoded once for all the streams that write it.
///
/// A change to a person watched by several streams is the same event on each (the same id, the same answer), so
/// the first stream to write it looks the answer up and encodes it, and the others write the same bytes
/// (``SharedEvent``). A slot per change number, in a ring of ``capacity``.
///
/// A stream's event carries the person's answer as it is when the stream writes it. A shared event is as good only
/// while it is recent: the streams a change wakes write it within a turn of their event loops, and an event is reused
/// for at most ``reusedFor`` after it was encoded. A stream that writes the change later (resumed from `Last-Event-ID`,
/// or catching up after its reader stalled), or after the ring moved past it, encodes the answer as it is then.
final class ChangeEvents: Sendable {
    /// How many recent changes keep their event: a few hundred bytes each, so at most about 300 KiB.
    static let capacity = 1024
    /// How long after it was encoded an event is shared rather than encoded again.
    static let reusedFor = TimeAmount.milliseconds(100)

    private let slots = Locked([Slot](repeating: Slot(), count: ChangeEvents.capacity))

    private struct Slot {
        var sequence: UInt64 = 0
        var event: SharedEvent?
        var encodedAt = NIODeadline.uptimeNanoseconds(0)
    }

    /// Change `sequence`'s event, encoded by `encode` unless a stream encoded it less than ``reusedFor`` ago.
    func event(_ sequence: UInt64, now: NIODeadline = .now(), encode: () -> SharedEvent) -> SharedEvent {
        let index = Int(sequence % UInt64(Self.capacity))
        let recent = slots.withLock { slots -> SharedEvent? in
            let slot = slots[index]
            return slot.sequence == sequence && now - slot.encodedAt < Self.reusedFor ? slot.event : nil
        }
        if let recent { return recent }
        let event = encode()
        slots.withLock { slots in
            if slots[index].sequence <= sequence {
                slots[index] = Slot(sequence: sequence, event: event, encodedAt: now)
            }
        }
        return event
    }
}
