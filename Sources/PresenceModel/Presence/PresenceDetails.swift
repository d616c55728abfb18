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

    /// The longest status, in UTF-8 bytes, that every storage holds exactly (the compact encoding counts it in
    /// 16 bits). ``PresenceDecoder`` cuts statuses far shorter (1 KiB by default) before they reach a storage.
    public static let maximumStatusBytes = Int(UInt16.max) - 1

    public init(show: PresenceShow? = nil, status: String? = nil, priority: Int8 = 0, attendance: Attendance? = nil) {
        self.show = show
        self.status = status
        self.priority = priority
        self.attendance = attendance
    }
}
