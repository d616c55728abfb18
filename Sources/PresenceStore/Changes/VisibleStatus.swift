import PresenceModel

/// What a screen shows for one user: the state, and for a known state the show, the status text and the
/// attendance. Priority, resource and time are left out on purpose: a presence that changes only those changes
/// nothing a person sees, so it is not a change worth pushing to a list or an org chart.
public struct VisibleStatus: Hashable, Sendable, CustomStringConvertible {
    public var state: PresenceState
    /// `chat`, `away`, `xa` or `dnd` for an available user; nil otherwise.
    public var show: PresenceShow?
    public var status: String?
    public var attendance: Attendance?
    /// For `lost`: why the storage dropped the user, when it knows.
    public var lostCause: RemovalCause?

    public init(
        state: PresenceState, show: PresenceShow? = nil, status: String? = nil, attendance: Attendance? = nil,
        lostCause: RemovalCause? = nil
    ) {
        self.state = state
        self.show = show
        self.status = status
        self.attendance = attendance
        self.lostCause = lostCause
    }

    /// Nothing known about the user.
    public static let unknown = VisibleStatus(state: .unknown)

    /// The storage dropped the user.
    public static func lost(_ cause: RemovalCause?) -> VisibleStatus { VisibleStatus(state: .lost, lostCause: cause) }

    /// What a stored value shows; a value with nothing applied shows nothing (`unknown`).
    public init(_ presence: UserPresence?) {
        guard let status = presence?.status else {
            self = .unknown
            return
        }
        let shown = status.presence.details
        self.init(
            state: status.isAvailable ? .available : .offline, show: status.isAvailable ? shown.show : nil,
            status: shown.status, attendance: shown.attendance)
    }

    /// What a storage's answer shows.
    public init(_ stored: StoredPresence) {
        switch stored {
        case .present(let presence): self.init(presence)
        case .lost(let cause): self = .lost(cause)
        case .unknown: self = .unknown
        }
    }

    public var description: String {
        var parts = [state.rawValue]
        if let show { parts.append(show.rawValue) }
        if let attendance { parts.append(attendance.rawValue) }
        if let status { parts.append("\"\(status)\"") }
        if let lostCause { parts.append("(\(lostCause.rawValue))") }
        return parts.joined(separator: " ")
    }
}
