#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An XMPP address, `localpart@domainpart/resourcepart` (RFC 7622).
///
/// Each part is at most 1023 bytes and the domain is required. The localpart and domainpart are compared
/// case-insensitively and stored in lower case; the resource is case-sensitive and kept as written.
/// (Full PRECIS profiles are out of scope; ASCII case folding covers the addresses enterprise directories use,
/// and non-ASCII parts are folded with Unicode lowercasing.)
public struct JID: Hashable, Sendable, CustomStringConvertible {
    public let bare: BareJID
    public let resource: String?

    public static let maximumPartBytes = 1023

    public init(bare: BareJID, resource: String?) {
        self.bare = bare
        self.resource = resource
    }

    /// Parses and normalises a JID.
    public init(_ string: String) throws(JIDError) {
        var string = string
        self = try string.withUTF8 { bytes in Result { () throws(JIDError) in try JID(utf8: bytes) } }.get()
    }

    /// Parses and normalises a JID from UTF-8 bytes, such as an attribute value straight from the parser.
    public init(utf8 bytes: UnsafeBufferPointer<UInt8>) throws(JIDError) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { throw .empty }
        let count = bytes.count
        // RFC 7622 §3.1: the resource starts at the first '/', the localpart ends at the first '@' before it.
        let slash =
            memchr(base, Int32(UInt8(ascii: "/")), count).map { UnsafeRawPointer($0) - UnsafeRawPointer(base) } ?? count
        let at =
            memchr(base, Int32(UInt8(ascii: "@")), slash).map { UnsafeRawPointer($0) - UnsafeRawPointer(base) } ?? -1
        let domainStart = at + 1
        var domainEnd = slash
        if domainEnd > domainStart && base[domainEnd - 1] == UInt8(ascii: ".") { domainEnd -= 1 }  // §3.2: trailing dot
        // One more dot at the end is an empty label (`example.com..`, `.`, `..`): not a domain. Stripping a second
        // dot as well would make a JID whose printed form parses to another JID (found by FuzzJID).
        if domainEnd > domainStart && base[domainEnd - 1] == UInt8(ascii: ".") { throw .emptyDomainpart }

        // One pass over each part, OR-ing the byte classes together; the rare failures are explained afterwards.
        var localClasses: UInt8 = 0
        if at >= 0 {
            guard at > 0 else { throw .emptyLocalpart }
            guard at <= JID.maximumPartBytes else { throw .localpartTooLong }
            for index in 0 ..< at { localClasses |= ByteClass.of(base[index]) }
            if localClasses & ByteClass.forbiddenInLocalpart != 0 { throw .forbiddenCharacterInLocalpart }
        }
        guard domainEnd > domainStart else { throw .emptyDomainpart }
        guard domainEnd - domainStart <= JID.maximumPartBytes else { throw .domainpartTooLong }
        var domainClasses: UInt8 = 0
        for index in domainStart ..< domainEnd { domainClasses |= ByteClass.of(base[index]) }
        if domainClasses & ByteClass.forbiddenInDomainpart != 0 { throw .forbiddenCharacterInDomainpart }

        var resource: String?
        if slash < count {
            let resourceBytes = UnsafeBufferPointer(start: base + slash + 1, count: count - slash - 1)
            guard !resourceBytes.isEmpty else { throw .emptyResourcepart }
            guard resourceBytes.count <= JID.maximumPartBytes else { throw .resourcepartTooLong }
            var resourceClasses: UInt8 = 0
            for byte in resourceBytes { resourceClasses |= ByteClass.of(byte) }
            if resourceClasses & ByteClass.control != 0 { throw .forbiddenCharacterInResourcepart }
            resource = try JID.string(resourceBytes, isASCII: resourceClasses & ByteClass.nonASCII == 0)
        }

        let classes = localClasses | domainClasses
        let bareString: String
        if classes & (ByteClass.uppercase | ByteClass.nonASCII) == 0 && domainEnd == slash {
            bareString = String(decoding: UnsafeBufferPointer(start: base, count: slash), as: UTF8.self)
        } else {
            let local = at >= 0 ? UnsafeBufferPointer(start: base, count: at) : nil
            let domain = UnsafeBufferPointer(start: base + domainStart, count: domainEnd - domainStart)
            guard
                let normalized = JID.normalize(
                    local: local, domain: domain, asciiOnly: classes & ByteClass.nonASCII == 0)
            else {
                throw .invalidUTF8
            }
            bareString = normalized
        }
        self.init(bare: BareJID(normalized: bareString), resource: resource)
    }

    /// Decodes bytes that must already be valid UTF-8; ASCII skips validation.
    private static func string(_ bytes: UnsafeBufferPointer<UInt8>, isASCII: Bool) throws(JIDError) -> String {
        if isASCII { return String(decoding: bytes, as: UTF8.self) }
        guard let string = String(validating: bytes, as: UTF8.self) else { throw .invalidUTF8 }
        return string
    }

    /// Bit flags classifying a byte for JID validation.
    private enum ByteClass {
        static let forbiddenInLocalpart: UInt8 = 1
        static let forbiddenInDomainpart: UInt8 = 2
        static let uppercase: UInt8 = 4
        static let nonASCII: UInt8 = 8
        static let control: UInt8 = 16

        @inline(__always)
        static func of(_ byte: UInt8) -> UInt8 {
            if byte >= 0x80 { return nonASCII }
            if byte >= UInt8(ascii: "a") {
                return byte == 0x7F ? control | forbiddenInLocalpart | forbiddenInDomainpart : 0
            }
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { return uppercase }
            if byte < 0x20 { return control | forbiddenInLocalpart | forbiddenInDomainpart }
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "/"), UInt8(ascii: "<"),
                UInt8(ascii: ">"), UInt8(ascii: "@"), UInt8(ascii: " "):
                return forbiddenInLocalpart | forbiddenInDomainpart
            case UInt8(ascii: ":"):
                return forbiddenInLocalpart  // allowed in IPv6 domain literals
            default:
                return 0
            }
        }
    }

    public var description: String {
        guard let resource else { return bare.rawValue }
        return bare.rawValue + "/" + resource
    }

    private static func normalize(
        local: UnsafeBufferPointer<UInt8>?, domain: UnsafeBufferPointer<UInt8>, asciiOnly: Bool
    ) -> String? {
        if asciiOnly {
            let length = (local.map { $0.count + 1 } ?? 0) + domain.count
            return String(unsafeUninitializedCapacity: length) { output in
                var index = 0
                func copyLowercased(_ part: UnsafeBufferPointer<UInt8>) {
                    for byte in part {
                        output[index] = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
                        index += 1
                    }
                }
                if let local {
                    copyLowercased(local)
                    output[index] = UInt8(ascii: "@")
                    index += 1
                }
                copyLowercased(domain)
                return index
            }
        }
        guard let domainString = String(validating: domain, as: UTF8.self) else { return nil }
        guard let local else { return domainString.lowercased() }
        guard let localString = String(validating: local, as: UTF8.self) else { return nil }
        return localString.lowercased() + "@" + domainString.lowercased()
    }
}
