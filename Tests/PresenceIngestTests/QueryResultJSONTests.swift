import Foundation
import PresenceStore
import Testing

@Suite("The hand-written query JSON matches what JSONEncoder writes")
struct QueryResultJSONTests {
    @Test func everyStateEncodesLikeJSONEncoder() throws {
        var presence = UserPresence()
        presence.apply(available("a@example.com/desk \"quoted\"", priority: -3, show: .dnd, status: "Line\nbreak \\ tab\t \u{1} é ✓",
                                 attendance: .businessTrip), receivedAt: time(1))
        var offline = UserPresence()
        offline.apply(unavailable("b@example.com", status: "Gone", attendance: .vacation), receivedAt: time(2))
        let results = [
            PresenceQueryResult(jid: jid("a@example.com"), stored: .present(presence)),
            PresenceQueryResult(jid: jid("b@example.com"), stored: .present(offline)),
            PresenceQueryResult(jid: jid("c@example.com"), stored: .lost(.countLimit)),
            PresenceQueryResult(jid: jid("d@example.com"), stored: .lost(nil)),
            PresenceQueryResult(jid: jid("e@example.com"), stored: .unknown),
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        for result in results {
            var handWritten: [UInt8] = []
            result.appendJSON(to: &handWritten)
            let viaEncoder = try JSONSerialization.jsonObject(with: encoder.encode(result)) as? NSDictionary
            let viaHand = try JSONSerialization.jsonObject(with: Data(handWritten)) as? NSDictionary
            #expect(viaHand == viaEncoder, "\(result.jid)")
            #expect(try JSONDecoder().decode(PresenceQueryResult.self, from: Data(handWritten)) == result)
        }
    }
}
