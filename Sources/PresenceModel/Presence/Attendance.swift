/// Where a person is in their working day, as shown in org charts beside the presence.
///
/// Carried in a presence as `<attendance xmlns='urn:presence-store:attendance' state='working'/>` and kept with
/// the status, also when the person goes offline (someone offline and on vacation is not just offline).
public enum Attendance: String, Hashable, Sendable, CaseIterable {
    case working
    case remote
    case meeting
    case businessTrip = "business-trip"
    case vacation
    case sickLeave = "sick-leave"
    case offWork = "off-work"

    /// The namespace of the `<attendance/>` element.
    public static let namespace = "urn:presence-store:attendance"
}
