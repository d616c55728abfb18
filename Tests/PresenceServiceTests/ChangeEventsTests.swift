import NIOCore
import Testing

@testable import PresenceService

/// The events of recent changes, shared by the streams that write them: encoded once per change, and never one
/// change's bytes for another's.
@Suite("Change events")
struct ChangeEventsTests {
    /// Encodes `text` as an event, counting how often it was asked to.
    final class Encoder {
        var encoded: [UInt64] = []

        func event(_ sequence: UInt64, _ events: ChangeEvents, at now: NIODeadline = .now()) -> String {
            let bytes = events.event(sequence, now: now) {
                encoded.append(sequence)
                return SharedEvent { $0.writeString("change \(sequence)") }
            }
            return String(buffer: bytes.event)
        }
    }

    @Test func aChangeWrittenByManyStreamsIsEncodedOnce() {
        let events = ChangeEvents()
        let encoder = Encoder()
        for _ in 0 ..< 40 { #expect(encoder.event(7, events) == "change 7") }
        #expect(encoder.event(8, events) == "change 8")
        #expect(encoder.encoded == [7, 8])
    }

    @Test func aChangeTheRingMovedPastIsEncodedAgainNeverAnsweredWithAnotherChangesEvent() {
        let events = ChangeEvents()
        let encoder = Encoder()
        let later = 7 + UInt64(ChangeEvents.capacity)  // the same slot as change 7
        #expect(encoder.event(7, events) == "change 7")
        #expect(encoder.event(later, events) == "change \(later)")
        // A stream still writing change 7 gets its own event, not the slot's newer one...
        #expect(encoder.event(7, events) == "change 7")
        // ...and that older event does not take the slot back from the newer change.
        #expect(encoder.event(later, events) == "change \(later)")
        #expect(encoder.encoded == [7, later, 7])
    }

    @Test func aStreamWritingAChangeLongAfterTheOthersEncodesTheAnswerAsItIsThen() {
        // A stream resumed from Last-Event-ID, or one whose reader stalled, writes an old change: its answer is
        // read again rather than copied from when the change was new.
        let events = ChangeEvents()
        let encoder = Encoder()
        let encoded = NIODeadline.now()
        _ = encoder.event(7, events, at: encoded)
        _ = encoder.event(7, events, at: encoded + .milliseconds(50))
        #expect(encoder.encoded == [7], "the streams a change wakes at once share its event")
        _ = encoder.event(7, events, at: encoded + ChangeEvents.reusedFor + .milliseconds(1))
        #expect(encoder.encoded == [7, 7])
    }
}
