import PresenceModel
import PresenceStore

/// What the confirmations are asked for and hand back: why a round asks, answers made final, rounds ended,
/// members still waited for.
extension Confirmations {
    enum Purpose: Hashable, Sendable {
        /// The roster snapshot after the initial presence.
        case snapshot
        /// Contacts a roster push added.
        case rosterAddition
        /// A lookup's probe batch.
        case probe
        /// A batch of the periodic resync, which asks every member again.
        case resync
    }

    /// One member's answer, final.
    struct Settled: Sendable {
        let round: String
        let purpose: Purpose
        let member: BareJID
        let verdict: MemberConfirmation.Verdict
        /// The resources the server reported available (empty when offline).
        let resources: Set<String>
        /// The member's presence as the round received it (probe rounds only), should the storage have evicted it.
        let captured: UserPresence?
        /// The storage showed the member available when the server said they had no resource: the answer
        /// corrects a status the server no longer held, even if the storage agrees by the time it is final.
        let correctsShownAvailable: Bool
    }

    /// What a settle pass did: the rounds it ended, and when the next answer becomes final if its member stays
    /// quiet (nil when no answer is waiting for that).
    struct SettlePass: Sendable {
        var finished: [Finished] = []
        var nextDeadline: ContinuousClock.Instant?
    }

    /// A round whose every member is final.
    struct Finished: Sendable {
        let round: String
        let purpose: Purpose
        let members: Int
        let offline: Int
        let started: ContinuousClock.Instant
    }

    /// Members of open rounds who have no certain answer yet.
    struct Pending: Sendable {
        let round: String
        let purpose: Purpose
        let members: Set<BareJID>
        /// Of those, the ones for whom the server refused last activity, by the condition it gave.
        let refusals: [String: Int]
        /// Of those, the ones the server says have a session but sent no available presence for.
        let withSession: Int
    }
}
