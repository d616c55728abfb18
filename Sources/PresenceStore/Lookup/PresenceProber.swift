import PresenceModel

/// The origin behind a storage: something that can ask the presence server about a user again, as an image
/// cache fetches a missed image from the network.
///
/// A prober feeds the same storage a ``PresenceLookup`` reads: its answers are stored like any update (they may
/// evict someone else, and the storage's loss accounting stays exact), and returned to the caller as well, so
/// an answer evicted again at once is still answered.
public protocol PresenceProber: Sendable {
    /// Whether the server answers probes about `jid` (a contact the watcher is subscribed to). Others are never
    /// probed: the server would drop the probe and the lookup would only time out.
    func isProbeable(_ jid: BareJID) -> Bool

    /// Whether the storage's entry for `jid` was rebuilt after a loss from a presence of one resource, and not
    /// confirmed by the server since: it may lack the user's other resources, so it is no complete answer.
    func isPartial(_ jid: BareJID) -> Bool

    /// Whether probes can be sent now.
    var isConnected: Bool { get }

    /// Asks the server about `jids` (all probeable), stores the answers and returns, within `timeout`, the
    /// presence of each user the server answered for certain; a member with no available resource is answered
    /// `offline`. A user missing from the result got no certain answer in time: never answer them `offline`.
    ///
    /// Throws ``ProbeFailure/notConnected`` when the session is down or ends before the answers arrive, and
    /// returns promptly (throwing `CancellationError`) when the calling task is cancelled.
    func probe(_ jids: Set<BareJID>, timeout: Duration) async throws -> [BareJID: UserPresence]
}

extension PresenceProber {
    /// A prober that cannot tell: no entry is known to be partial.
    public func isPartial(_ jid: BareJID) -> Bool { false }
}
