import Foundation
import Logging
import PresenceIngest
import PresenceModel
import PresenceStore
import XMPPClient
import XMPPStream

/// Saying what holds the source back: a read rate limit the server applies to the watcher, and the members it
/// has not answered for, with the likely cause.
extension XMPPPresenceSource {
    /// A read rate limit began or ended: said in the log once, kept in the status while it holds.
    func noteReadLimit(_ change: ReadRateLimitDetector.Change) {
        switch change {
        case .began(let limit):
            let reported = updateReadLimit(limit).current
            logger.warning(
                "\(reported.explanation)",
                metadata: [
                    "bytesPerSecond": "\(reported.bytesPerSecond)", "questionsWaiting": "\(reported.waiting)",
                ])
        case .ended:
            let ended = state.withLock { state in
                defer { state.readLimit = nil }
                return state.readLimit
            }
            if ended != nil { logger.notice("the XMPP server's read rate limit no longer holds questions back") }
        }
    }

    /// Keeps the status's read limit current (its rate and backlog change as it drains); returns it, and again
    /// as `renamed` when its likely setting is not the one said before.
    func updateReadLimit(
        _ limit: ReadRateLimitDetector.Limit
    ) -> (current: ServerReadLimit, renamed: ServerReadLimit?) {
        let now = ContinuousClock.now
        let time = clock()
        return state.withLock { state in
            let ago = now - limit.since
            let since =
                state.readLimit?.since
                ?? PresenceTime(millisecondsSinceEpoch: time.millisecondsSinceEpoch - Int64(ago / .milliseconds(1)))
            let reported = ServerReadLimit(
                bytesPerSecond: limit.bytesPerSecond, answersPerSecond: limit.answersPerSecond,
                waiting: limit.waiting, since: since)
            let before = state.readLimit
            state.readLimit = reported
            let renamed = before != nil && before?.likelySetting != reported.likelySetting
            return (reported, renamed ? reported : nil)
        }
    }

    /// Says which members the server has not answered for, and the likely cause.
    func warnAbout(_ pending: Confirmations.Pending) {
        if pending.purpose == .snapshot {
            state.withLock { state in
                if state.snapshotRound == pending.round { state.snapshotUnconfirmed = pending.members.count }
            }
        }
        let refused = pending.refusals.values.reduce(0, +)
        let heardFromAnyone = state.withLock { $0.presencesReceived > 0 }
        var metadata: Logger.Metadata = [
            "unconfirmed": "\(pending.members.count)",
            "examples": "\(pending.members.prefix(3).map(\.rawValue).sorted().joined(separator: ","))",
        ]
        if !pending.refusals.isEmpty {
            metadata["lastActivityRefused"] = "\(pending.refusals.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ","))"
        }
        let cause: String
        if let limit = state.withLock({ $0.readLimit }) {
            cause = limit.explanation
        } else if !heardFromAnyone && refused > 0 {
            cause =
                "the server shares no member's presence with the watcher: the members do not have the watcher as a "
                + "contact (a shared roster group must be displayed both ways: the members' group to the watcher "
                + "and the watcher's group to the members)"
        } else if refused > 0 {
            cause =
                "the server sent no presence for these members and refused to say when they were last active "
                + "(XEP-0012): load mod_last (ejabberd) or mod_lastactivity, or check the members' rosters"
        } else if pending.withSession > 0 {
            cause = "the server says these members have a session but sent no available presence for them"
        } else {
            cause = "the server has not answered about these members yet"
        }
        state.withLock { $0.warning = cause }
        logger.warning("no certain status for some roster members; asking again: \(cause)", metadata: metadata)
    }
}
