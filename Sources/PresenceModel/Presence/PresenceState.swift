/// The one-word answer about a user, as every screen and every document shows it.
public enum PresenceState: String, Hashable, Sendable, CaseIterable, Codable, CustomStringConvertible {
    /// At least one of the user's resources is available.
    case available
    /// Every resource has gone: a known state, with the time and the last status and attendance.
    case offline
    /// Never seen (or removed on purpose): nothing is known.
    case unknown
    /// The store held a status for this user and dropped it: what the user shows now is not known, and showing
    /// them as offline would be a lie.
    case lost

    public var description: String { rawValue }
}
