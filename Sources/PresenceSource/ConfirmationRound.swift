import PresenceModel
import PresenceStore

/// One round of questions about members (``Confirmations``): why it asks, when and in what order it opened,
/// and what the server has said about each member since.
struct ConfirmationRound {
    let purpose: Confirmations.Purpose
    let started: ContinuousClock.Instant
    /// Where the round stands among everything issued: an answer to a question asked before the round opened
    /// says nothing about the time the round asks about.
    let issue: Int
    var members: [BareJID: MemberConfirmation]
    /// Members without a final answer.
    var unsettled: Set<BareJID>
    /// Members with a verdict that is not final yet: what a settle pass looks at.
    var candidates: Set<BareJID> = []
    var captured: [BareJID: UserPresence] = [:]
    var offline = 0
    /// The ping after the round's question was answered: the server has read the question.
    var pingAnswered = false
    /// Members the storage showed available when the server said they had no resource.
    var shownAvailable: Set<BareJID> = []
}
