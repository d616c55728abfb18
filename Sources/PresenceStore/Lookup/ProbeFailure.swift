/// Why a lookup that wanted the origin server's answer did not get it. The answer is then the storage's (often
/// `lost`), with this reason beside it rather than a silent miss.
public enum ProbeFailure: String, Error, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// The user is not on the watcher's roster: the server would drop the probe, so none is sent.
    case notAMember = "not-a-member"
    /// No session to the server is up (or the service has no probing source at all).
    case notConnected = "not-connected"
    /// The probe budget (probes per second) was spent; the lookup did not queue.
    case rateLimited = "rate-limited"
    /// The server did not answer within the probe timeout.
    case timeout

    public var description: String { rawValue }
}
