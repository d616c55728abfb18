import PresenceModel

/// An interface of the XMPP server that names every account with a session now, in one answer.
///
/// The watcher learns that a member is offline from the server: an unavailable presence in reply to a probe
/// (RFC 6121 §4.3.2, Prosody's way), or, from a server that sends nothing for a member without a session
/// (ejabberd), one XEP-0012 last-activity question per member. Each such question costs the server a
/// subscription check, and with a shared roster group holding `@all@` that check works out a roster of everyone:
/// thousands of members make thousands of everyone-sized rosters. A directory answers for every member at once
/// from the server's session table: a member it does not list has no session, which is as certain as a
/// last-activity answer (``MemberConfirmation`` has the rule); a member it lists is asked as before.
///
/// A directory that fails (refused, unreachable, an answer that cannot be read) is not asked again in that
/// session: the members go to last activity, so the plain watcher account always works.
public protocol SessionDirectory: Sendable, CustomStringConvertible {
    /// The bare JIDs of the accounts with at least one session on the server now.
    func accountsWithSession() async throws -> Set<BareJID>
}
