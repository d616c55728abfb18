// A storage is used with the model's values (`BareJID`, `UserPresence`, `PresenceUpdate`): importing
// PresenceStore brings them along, as importing NIO brings NIOCore.
@_exported import PresenceModel
