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
        var slash = count
        var at = -1
        var hasUppercase = false
        var hasNonASCII = false
        for index in 0 ..< count {
            let byte = base[index]
            if byte == UInt8(ascii: "/") {
                slash = index
                break
            }
            if byte == UInt8(ascii: "@") && at < 0 { at = index }
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { hasUppercase = true }
            if byte >= 0x80 { hasNonASCII = true }
        }
        let localEnd = max(at, 0)
        let domainStart = at + 1
        var domainEnd = slash
        if domainEnd > domainStart && base[domainEnd - 1] == UInt8(ascii: ".") { domainEnd -= 1 }  // §3.2: trailing dot

        if at >= 0 {
            guard localEnd > 0 else { throw .emptyLocalpart }
            guard localEnd <= JID.maximumPartBytes else { throw .localpartTooLong }
            for index in 0 ..< localEnd where JID.isForbiddenInLocalpart(base[index]) {
                throw .forbiddenCharacterInLocalpart
            }
        }
        guard domainEnd > domainStart else { throw .emptyDomainpart }
        guard domainEnd - domainStart <= JID.maximumPartBytes else { throw .domainpartTooLong }
        for index in domainStart ..< domainEnd where JID.isForbiddenInDomainpart(base[index]) {
            throw .forbiddenCharacterInDomainpart
        }

        var resource: String?
        if slash < count {
            let resourceBytes = UnsafeBufferPointer(start: base + slash + 1, count: count - slash - 1)
            guard !resourceBytes.isEmpty else { throw .emptyResourcepart }
            guard resourceBytes.count <= JID.maximumPartBytes else { throw .resourcepartTooLong }
            for byte in resourceBytes where byte < 0x20 || byte == 0x7F { throw .forbiddenCharacterInResourcepart }
            guard let decoded = String(validating: resourceBytes, as: UTF8.self) else { throw .invalidUTF8 }
            resource = decoded
        }

        let bareString: String
        let trailingDotRemoved = domainEnd != slash
        if !hasUppercase && !hasNonASCII && !trailingDotRemoved {
            bareString = String(decoding: UnsafeBufferPointer(start: base, count: slash), as: UTF8.self)
        } else {
            let local = at >= 0 ? UnsafeBufferPointer(start: base, count: localEnd) : nil
            let domain = UnsafeBufferPointer(start: base + domainStart, count: domainEnd - domainStart)
            guard let normalized = JID.normalize(local: local, domain: domain, asciiOnly: !hasNonASCII) else {
                throw .invalidUTF8
            }
            bareString = normalized
        }
        self.init(bare: BareJID(normalized: bareString), resource: resource)
    }

    public var description: String {
        guard let resource else { return bare.rawValue }
        return bare.rawValue + "/" + resource
    }

    @inline(__always)
    static func isForbiddenInLocalpart(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "/"), UInt8(ascii: ":"),
             UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "@"), UInt8(ascii: " "), 0x7F:
            return true
        default:
            return byte < 0x20
        }
    }

    @inline(__always)
    static func isForbiddenInDomainpart(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "/"), UInt8(ascii: "<"),
             UInt8(ascii: ">"), UInt8(ascii: "@"), UInt8(ascii: " "), 0x7F:
            return true
        default:
            return byte < 0x20
        }
    }

    private static func normalize(local: UnsafeBufferPointer<UInt8>?, domain: UnsafeBufferPointer<UInt8>, asciiOnly: Bool) -> String? {
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
