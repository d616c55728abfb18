import PresenceWire
import Synchronization

/// A person's last presence as its sender knows it: what the service must answer once everything has arrived.
struct Expected: Sendable, Equatable {
    var available: Bool
    var show: String?
    var status: String?

    static let offline = Expected(available: false)

    func matches(_ answer: PresenceQueryResult) -> Bool {
        guard available else { return answer.state == .offline }
        return answer.state == .available && answer.show?.rawValue == show && answer.status == status
    }
}

let truth = Mutex<[String: Expected]>([:])
let shows: [String?] = [nil, "away", "chat", "dnd", "xa"]
