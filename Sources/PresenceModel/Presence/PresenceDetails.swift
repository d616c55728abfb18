/// What one resource's presence says about the person: the fields a UI shows.
public struct PresenceDetails: Hashable, Sendable {
    /// `nil` is plain available (or, in an unavailable presence, no `<show>`).
    public var show: PresenceShow?
    /// The `<status>` text chosen by language (see ``PresenceDecoder``).
    public var status: String?
    /// `<priority>`, -128...127; 0 when absent or not an integer.
    public var priority: Int8
    /// The `<attendance/>` state, if the presence carried one.
    public var attendance: Attendance?

    public init(show: PresenceShow? = nil, status: String? = nil, priority: Int8 = 0, attendance: Attendance? = nil) {
        self.show = show
        self.status = status
        self.priority = priority
        self.attendance = attendance
    }
}
