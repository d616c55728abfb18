import PresenceModel

/// What the server has said for certain about one roster member since the watcher asked (a snapshot or a
/// probe), and the answer that makes certain. Nothing is inferred from silence or from the order of stanzas.
///
/// The rule, which holds on any RFC 6121 server whatever order it answers in:
/// - **Available** once the server has sent an available presence from one of the member's resources (it must
///   send one for each available resource in answer to a probe, RFC 6121 §4.3.2), and the member has then been
///   quiet for the settle window, so the answer has all their resources as far as a wait can tell.
/// - **Offline** once the server has said the member has no available resource: an unavailable presence from the
///   member's bare JID (RFC 6121 §4.3.2's reply to a probe, Prosody's way), or XEP-0012 last activity answered by
///   the server with more than 0 seconds (ejabberd's way: it sends nothing in reply to a probe of a member without
///   a session) or a session directory of the server that does not list them (``SessionDirectory``), and no
///   available presence from them since.
/// - **Not known** otherwise: a member the server said nothing certain about is never answered `offline`.
struct MemberConfirmation {
    enum Verdict: Hashable, Sendable {
        case available
        case offline
    }

    /// The member's resources the server reported available since the confirmation began.
    private(set) var resources: Set<String> = []
    /// The server said the member has no available resource (and no available presence came after it).
    private(set) var saidNoResource = false
    /// When the server last said something about the member.
    private(set) var lastStatement: ContinuousClock.Instant?
    /// The server's answer to last activity was an error (its condition: `subscription-required`, `forbidden`,
    /// `service-unavailable`...): the server will not say when the member has no session.
    private(set) var lastActivityRefusal: String?
    /// The server answered last activity with 0 seconds: the member has a session now, so presences are due, or
    /// their last session ended less than a second ago (XEP-0012 counts whole seconds): it is asked again.
    private(set) var hasSession = false
    /// The certain answer, once the member settled; nothing the server says afterwards changes it (later
    /// presences are live changes, applied as such).
    private(set) var final: Verdict?

    /// The answer the server's statements make certain so far.
    var verdict: Verdict? {
        if !resources.isEmpty { return .available }
        return saidNoResource ? .offline : nil
    }

    /// Whether the server has said anything about the member yet.
    var isSilent: Bool { lastStatement == nil }

    mutating func record(_ update: PresenceUpdate, at now: ContinuousClock.Instant) {
        guard final == nil else { return }
        lastStatement = now
        switch update.availability {
        case .available:
            resources.insert(update.from.resource ?? "")
            saidNoResource = false
        case .unavailable:
            if let resource = update.from.resource {
                // One resource left; whether the member has others is not said.
                resources.remove(resource)
            } else {
                resources = []
                saidNoResource = true
            }
        }
    }

    /// The server's XEP-0012 answer: `seconds` since the member's last session ended.
    mutating func recordLastActivity(seconds: Int, at now: ContinuousClock.Instant) {
        guard final == nil else { return }
        if seconds > 0 {
            recordNoSession(at: now)
        } else {
            recordSession(at: now)
        }
    }

    /// The server said the member has a session now (a session directory lists them): their presence is due, or
    /// the session has sent none yet; last activity is asked if no presence comes within its granularity.
    mutating func recordSession(at now: ContinuousClock.Instant) {
        guard final == nil else { return }
        lastStatement = now
        hasSession = true
    }

    /// The server said the member has no session now (last activity over 0 seconds, or a session directory
    /// that does not list them). A presence that said otherwise before it stands: available wins.
    mutating func recordNoSession(at now: ContinuousClock.Instant) {
        guard final == nil else { return }
        lastStatement = now
        if resources.isEmpty { saidNoResource = true }
    }

    /// Whether to ask last activity again: it said 0 seconds at least `interval` ago and no presence has come.
    func needsLastActivityAgain(at now: ContinuousClock.Instant, after interval: Duration) -> Bool {
        guard final == nil, verdict == nil, hasSession, let lastStatement else { return false }
        return now - lastStatement >= interval
    }

    /// Last activity is asked again.
    mutating func askingLastActivityAgain() {
        hasSession = false
    }

    /// The server refused or does not support last activity for the member.
    mutating func recordLastActivityRefusal(_ condition: String) {
        lastActivityRefusal = condition
    }

    /// When an available verdict that is not final yet becomes final if the member stays quiet; nil otherwise.
    func settles(quiet settle: Duration) -> ContinuousClock.Instant? {
        guard final == nil, verdict == .available, let lastStatement else { return nil }
        return lastStatement + settle
    }

    /// Makes the verdict final when it is certain: at once for `offline`, after `settle` of quiet for
    /// `available`. Returns the verdict when it became final now.
    mutating func settle(at now: ContinuousClock.Instant, quiet settle: Duration) -> Verdict? {
        guard final == nil, let verdict, let lastStatement else { return nil }
        if verdict == .available && now - lastStatement < settle { return nil }
        final = verdict
        return verdict
    }
}
