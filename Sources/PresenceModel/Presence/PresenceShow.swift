/// The `<show>` of an available presence (RFC 6121 §4.7.2.1). No `<show>` means plain available.
public enum PresenceShow: String, Hashable, Sendable, CaseIterable {
    /// Available and wants to chat.
    case chat
    /// Temporarily away.
    case away
    /// Extended away.
    case xa
    /// Do not disturb.
    case dnd
}
