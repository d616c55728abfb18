/// Why a string is not a valid JID (RFC 7622).
public enum JIDError: Error, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case empty
    case emptyLocalpart
    case emptyDomainpart
    case emptyResourcepart
    case localpartTooLong
    case domainpartTooLong
    case resourcepartTooLong
    /// The localpart holds one of `" & ' / : < > @`, a space or a control character.
    case forbiddenCharacterInLocalpart
    /// The domainpart holds a space, a control character or one of `@ / " & ' < >`.
    case forbiddenCharacterInDomainpart
    /// The resourcepart holds a control character.
    case forbiddenCharacterInResourcepart
    case invalidUTF8
    /// A bare JID was expected and the string has a resource.
    case unexpectedResource

    /// A stable, kebab-case name, used as the reason when rejected presences are counted.
    public var reason: String {
        switch self {
        case .empty: "empty"
        case .emptyLocalpart: "empty-localpart"
        case .emptyDomainpart: "empty-domainpart"
        case .emptyResourcepart: "empty-resourcepart"
        case .localpartTooLong: "localpart-too-long"
        case .domainpartTooLong: "domainpart-too-long"
        case .resourcepartTooLong: "resourcepart-too-long"
        case .forbiddenCharacterInLocalpart: "forbidden-character-in-localpart"
        case .forbiddenCharacterInDomainpart: "forbidden-character-in-domainpart"
        case .forbiddenCharacterInResourcepart: "forbidden-character-in-resourcepart"
        case .invalidUTF8: "invalid-utf8"
        case .unexpectedResource: "unexpected-resource"
        }
    }

    public var description: String { reason }
}
