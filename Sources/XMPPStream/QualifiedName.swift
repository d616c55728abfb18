import CExpat

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A name as expat reports it with namespace processing on: `namespace SEP localName`, or just `localName`.
/// A view into expat's memory, valid during the callback that produced it.
struct QualifiedName {
    let namespace: UnsafeBufferPointer<UInt8>
    let localName: UnsafeBufferPointer<UInt8>

    init(_ name: UnsafePointer<XML_Char>) {
        let bytes = UnsafeRawPointer(name).assumingMemoryBound(to: UInt8.self)
        let length = strlen(name)
        if let separator = memchr(bytes, Int32(Expat.namespaceSeparator), length) {
            let namespaceLength = UnsafeRawPointer(separator) - UnsafeRawPointer(bytes)
            namespace = UnsafeBufferPointer(start: bytes, count: namespaceLength)
            localName = UnsafeBufferPointer(start: bytes + namespaceLength + 1, count: length - namespaceLength - 1)
        } else {
            namespace = UnsafeBufferPointer(start: bytes, count: 0)
            localName = UnsafeBufferPointer(start: bytes, count: length)
        }
    }

    /// Whether this is `xml:lang`, checked without touching a `String`: this runs for every attribute.
    var isXMLLang: Bool {
        guard namespace.count == QualifiedName.xmlNamespace.utf8CodeUnitCount, localName.count == 4 else {
            return false
        }
        return memcmp(localName.baseAddress!, "lang", 4) == 0
            && memcmp(namespace.baseAddress!, QualifiedName.xmlNamespace.utf8Start, namespace.count) == 0
    }

    static let xmlNamespace: StaticString = "http://www.w3.org/XML/1998/namespace"

}

extension UnsafeBufferPointer<UInt8> {
    var string: String { String(decoding: self, as: UTF8.self) }
}
