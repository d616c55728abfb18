import CExpat

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Facts about the libexpat the process runs with, looked up at run time.
public enum Expat {
    /// The libexpat version string, for example `expat_2.5.0`.
    public static var version: String { String(cString: XML_ExpatVersion()) }

    /// Whether the loaded libexpat has reparse deferral (`XML_SetReparseDeferralEnabled`).
    ///
    /// Debian backports it into 2.5.0 security updates without changing `expat.h`, so it cannot be detected at
    /// compile time. With deferral on, a stanza that arrives alone is held until more bytes come, which would
    /// stall a live feed; the parser turns it off on every parser it creates whenever the symbol exists.
    public static var hasReparseDeferral: Bool { setReparseDeferralEnabled != nil }

    typealias SetReparseDeferralEnabled = @convention(c) (XML_Parser?, XML_Bool) -> XML_Bool

    static let setReparseDeferralEnabled: SetReparseDeferralEnabled? = {
        guard let process = dlopen(nil, RTLD_NOW) else { return nil }
        guard let symbol = dlsym(process, "XML_SetReparseDeferralEnabled") else { return nil }
        return unsafeBitCast(symbol, to: SetReparseDeferralEnabled.self)
    }()

    /// The character expat puts between a namespace name and a local name; it cannot occur in XML 1.0 text.
    static let namespaceSeparator: UInt8 = 0x01

    /// Maps an expat error to the XMPP stream-error condition a server would send.
    static func condition(for code: XML_Error) -> XMPPStreamError.Condition {
        switch code {
        case XML_ERROR_UNBOUND_PREFIX, XML_ERROR_UNDECLARING_PREFIX, XML_ERROR_RESERVED_PREFIX_XML,
            XML_ERROR_RESERVED_PREFIX_XMLNS, XML_ERROR_RESERVED_NAMESPACE_URI:
            return .badNamespacePrefix
        case XML_ERROR_UNDEFINED_ENTITY, XML_ERROR_RECURSIVE_ENTITY_REF, XML_ERROR_EXTERNAL_ENTITY_HANDLING,
            XML_ERROR_ENTITY_DECLARED_IN_PE, XML_ERROR_NOT_STANDALONE:
            return .restrictedXML
        case XML_ERROR_UNKNOWN_ENCODING, XML_ERROR_INCORRECT_ENCODING:
            return .unsupportedEncoding
        default:
            return .notWellFormed
        }
    }
}
