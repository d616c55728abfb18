#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One top-level element of an XMPP stream (presence, message, iq, ...), as a light, immutable element tree.
///
/// The tree keeps all its names, attribute values and text in one byte buffer with flat index tables, so a
/// stanza costs three buffers however many elements it has; the parser reuses them for the next stanza unless
/// the receiver keeps a copy. Elements are addressed by ``ElementID``; ``root`` is the stanza element.
/// Namespaces are already resolved: an element is identified by its namespace name and local name, whatever
/// prefix the input used.
public struct Stanza: Sendable {
    /// A handle to one element of this stanza. Only meaningful with the stanza it came from.
    public struct ElementID: Hashable, Sendable {
        @usableFromInline let index: Int32
        @inlinable init(_ index: Int32) { self.index = index }
    }

    @usableFromInline struct Span: Hashable, Sendable {
        @usableFromInline var start: UInt32
        @usableFromInline var count: UInt32
        @usableFromInline static let empty = Span(start: 0, count: 0)
        @inlinable init(start: UInt32, count: UInt32) {
            self.start = start
            self.count = count
        }
    }

    @usableFromInline struct ElementRecord: Sendable {
        @usableFromInline var namespace: Span
        @usableFromInline var localName: Span
        /// Effective `xml:lang` (own or inherited); `hasLanguage` tells whether there is one.
        @usableFromInline var language: Span
        @usableFromInline var hasLanguage: Bool
        @usableFromInline var text: Span
        @usableFromInline var firstAttribute: Int32
        @usableFromInline var attributeCount: Int32
        /// One past the last descendant: the elements of this subtree are `index ..< subtreeEnd`.
        @usableFromInline var subtreeEnd: Int32
    }

    @usableFromInline struct AttributeRecord: Sendable {
        @usableFromInline var namespace: Span
        @usableFromInline var localName: Span
        @usableFromInline var value: Span
    }

    @usableFromInline var bytes: [UInt8] = []
    @usableFromInline var elements: [ElementRecord] = []
    @usableFromInline var attributes: [AttributeRecord] = []

    /// Where the stanza starts in the input.
    public internal(set) var position = SourcePosition(line: 1, column: 1, byteOffset: 0)
    /// The stanza's size in raw input bytes, from its `<` to the end of its end tag.
    public internal(set) var byteCount = 0

    init() {}

    /// The stanza element itself.
    @inlinable public var root: ElementID { ElementID(0) }

    /// How many elements the stanza has, the stanza element included.
    @inlinable public var elementCount: Int { elements.count }

    // MARK: Names

    /// The element's local name (`presence` for `<p:presence xmlns:p='jabber:client'>`).
    public func localName(of element: ElementID) -> String { string(elements[Int(element.index)].localName) }

    /// The element's namespace name, or "" when it is in no namespace.
    public func namespace(of element: ElementID) -> String { string(elements[Int(element.index)].namespace) }

    /// Whether the element has this local name in this namespace, compared without allocating.
    @inlinable
    public func isElement(_ element: ElementID, named localName: String, in namespace: String) -> Bool {
        let record = elements[Int(element.index)]
        return equals(record.localName, localName) && equals(record.namespace, namespace)
    }

    /// Whether the element has this local name in this namespace; the fastest form, for names known at compile time.
    @inlinable
    public func isElement(_ element: ElementID, named localName: StaticString, in namespace: StaticString) -> Bool {
        let record = elements[Int(element.index)]
        return equals(record.localName, localName) && equals(record.namespace, namespace)
    }

    /// Whether the element is in this namespace, whatever its name.
    @inlinable
    public func isElement(_ element: ElementID, in namespace: StaticString) -> Bool {
        equals(elements[Int(element.index)].namespace, namespace)
    }

    /// Whether the element is in this namespace, whatever its name.
    @inlinable
    public func isElement(_ element: ElementID, in namespace: String) -> Bool {
        equals(elements[Int(element.index)].namespace, namespace)
    }

    /// Whether the element has this local name in any of the given namespaces.
    @inlinable
    public func isElement(_ element: ElementID, named localName: String, inAnyOf namespaces: [String]) -> Bool {
        let record = elements[Int(element.index)]
        guard equals(record.localName, localName) else { return false }
        for namespace in namespaces where equals(record.namespace, namespace) { return true }
        return false
    }

    // MARK: Attributes

    /// The value of an attribute, or nil when the element does not have it.
    ///
    /// Unprefixed attributes are in no namespace (pass ""); `xml:lang` is `("lang", XMPPNamespace.xml)`.
    @inlinable
    public func attribute(_ localName: String, namespace: String = "", of element: ElementID) -> String? {
        attributeSpan(localName, namespace: namespace, of: element).map(string)
    }

    /// Calls `body` with the raw UTF-8 bytes of an attribute value, without allocating a `String`.
    @inlinable
    public func withAttributeBytes<R>(
        _ localName: String, namespace: String = "", of element: ElementID,
        _ body: (UnsafeBufferPointer<UInt8>) throws -> R
    ) rethrows -> R? {
        guard let span = attributeSpan(localName, namespace: namespace, of: element) else { return nil }
        return try withBytes(span, body)
    }

    /// All attributes of the element in document order, as (namespace, local name, value).
    public func attributes(of element: ElementID) -> [(namespace: String, localName: String, value: String)] {
        let record = elements[Int(element.index)]
        let range = Int(record.firstAttribute) ..< Int(record.firstAttribute + record.attributeCount)
        return attributes[range].map { (string($0.namespace), string($0.localName), string($0.value)) }
    }

    /// Calls `body` with the raw UTF-8 bytes of an unprefixed attribute named at compile time, without
    /// allocating: the fastest way to read an attribute.
    @inlinable
    public func withAttributeBytes<R>(
        _ localName: StaticString, of element: ElementID, _ body: (UnsafeBufferPointer<UInt8>) throws -> R
    ) rethrows -> R? {
        let record = elements[Int(element.index)]
        var index = Int(record.firstAttribute)
        let end = index + Int(record.attributeCount)
        while index < end {
            let attribute = attributes[index]
            if attribute.namespace.count == 0 && equals(attribute.localName, localName) {
                return try withBytes(attribute.value, body)
            }
            index += 1
        }
        return nil
    }

    @inlinable
    func attributeSpan(_ localName: String, namespace: String, of element: ElementID) -> Span? {
        let record = elements[Int(element.index)]
        var index = Int(record.firstAttribute)
        let end = index + Int(record.attributeCount)
        while index < end {
            let attribute = attributes[index]
            if equals(attribute.localName, localName) && equals(attribute.namespace, namespace) {
                return attribute.value
            }
            index += 1
        }
        return nil
    }

    // MARK: Text and language

    /// The element's own character data (text of child elements excluded), entities already decoded.
    public func text(of element: ElementID) -> String { string(elements[Int(element.index)].text) }

    /// Calls `body` with the element's character data as raw UTF-8, without allocating a `String`.
    @inlinable
    public func withTextBytes<R>(of element: ElementID, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R
    {
        try withBytes(elements[Int(element.index)].text, body)
    }

    /// The element's effective `xml:lang`: its own, else its nearest ancestor's, else the stream header's.
    public func language(of element: ElementID) -> String? {
        let record = elements[Int(element.index)]
        return record.hasLanguage ? string(record.language) : nil
    }

    /// Whether the element's effective `xml:lang` equals `language` (compared case-insensitively, as language
    /// tags are), or, for `nil`, whether it has none.
    public func hasLanguage(_ element: ElementID, equalTo language: String?) -> Bool {
        let record = elements[Int(element.index)]
        guard var language else { return !record.hasLanguage }
        guard record.hasLanguage else { return false }
        return language.withUTF8 { other in
            withBytes(record.language) { own in
                own.count == other.count
                    && zip(own, other).allSatisfy { Stanza.asciiLowercased($0) == Stanza.asciiLowercased($1) }
            }
        }
    }

    /// Whether two elements have the same effective `xml:lang` (both none, or equal ignoring ASCII case).
    public func hasSameLanguage(_ element: ElementID, as other: ElementID) -> Bool {
        let first = elements[Int(element.index)]
        let second = elements[Int(other.index)]
        guard first.hasLanguage && second.hasLanguage else { return first.hasLanguage == second.hasLanguage }
        return withBytes(first.language) { one in
            withBytes(second.language) { two in
                one.count == two.count
                    && zip(one, two).allSatisfy { Stanza.asciiLowercased($0) == Stanza.asciiLowercased($1) }
            }
        }
    }

    /// Whether the element has an effective `xml:lang`.
    public func hasLanguage(_ element: ElementID) -> Bool { elements[Int(element.index)].hasLanguage }

    @inlinable static func asciiLowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    // MARK: Children

    /// The element's child elements, in document order.
    @inlinable
    public func children(of element: ElementID) -> Children {
        let index = element.index
        return Children(elements: elements, next: index + 1, end: elements[Int(index)].subtreeEnd)
    }

    /// The first child element with this local name and namespace.
    @inlinable
    public func firstChild(of element: ElementID, named localName: String, in namespace: String) -> ElementID? {
        for child in children(of: element) where isElement(child, named: localName, in: namespace) { return child }
        return nil
    }

    /// The child elements of one element, in document order.
    public struct Children: Sequence, IteratorProtocol, Sendable {
        @usableFromInline let elements: [ElementRecord]
        @usableFromInline var cursor: Int32
        @usableFromInline let end: Int32

        @inlinable init(elements: [ElementRecord], next: Int32, end: Int32) {
            self.elements = elements
            self.cursor = next
            self.end = end
        }

        @inlinable public mutating func next() -> ElementID? {
            guard cursor < end else { return nil }
            let current = cursor
            cursor = elements[Int(current)].subtreeEnd
            return ElementID(current)
        }
    }

    // MARK: Byte access

    @inlinable
    func withBytes<R>(_ span: Span, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try bytes.withUnsafeBufferPointer { buffer in
            try body(UnsafeBufferPointer(rebasing: buffer[Int(span.start) ..< Int(span.start + span.count)]))
        }
    }

    @inlinable
    func string(_ span: Span) -> String {
        withBytes(span) { String(decoding: $0, as: UTF8.self) }
    }

    @inlinable
    func equals(_ span: Span, _ other: String) -> Bool {
        var other = other
        return other.withUTF8 { equals(span, $0) }
    }

    @inlinable
    func equals(_ span: Span, _ other: StaticString) -> Bool {
        guard other.hasPointerRepresentation else { return equals(span, other.description) }
        return equals(span, UnsafeBufferPointer(start: other.utf8Start, count: other.utf8CodeUnitCount))
    }

    /// Byte comparison for the short names and namespaces of XML: an inline loop beats a `memcmp` call here.
    @inlinable
    func equals(_ span: Span, _ other: UnsafeBufferPointer<UInt8>) -> Bool {
        guard Int(span.count) == other.count else { return false }
        return bytes.withUnsafeBufferPointer { buffer in
            var index = 0
            let start = Int(span.start)
            while index < other.count {
                if buffer[start &+ index] != other[index] { return false }
                index &+= 1
            }
            return true
        }
    }
}

// MARK: - Building (used by the parser)

extension Stanza {
    /// Empties the stanza, keeping its buffers' capacity when nobody else holds them.
    /// The most memory a stanza keeps for the next one built in it: an ordinary stanza's memory is reused, a large
    /// one's is let go (otherwise one large stanza would make every later one as large, wherever stanzas are kept,
    /// see ``XMPPStreamParser/recycle(_:)``).
    static let retainedBytes = 16 * 1024
    static let retainedRecords = 256

    /// Whether the stanza's memory is small enough to build another in.
    var isSmallEnoughToReuse: Bool {
        bytes.capacity <= Stanza.retainedBytes && elements.capacity <= Stanza.retainedRecords
            && attributes.capacity <= Stanza.retainedRecords
    }

    mutating func reset(position: SourcePosition) {
        if isSmallEnoughToReuse {
            bytes.removeAll(keepingCapacity: true)
            elements.removeAll(keepingCapacity: true)
            attributes.removeAll(keepingCapacity: true)
        } else {
            bytes = []
            elements = []
            attributes = []
        }
        self.position = position
        byteCount = 0
    }

    mutating func append(_ pointer: UnsafePointer<UInt8>, count: Int) -> Span {
        let start = UInt32(truncatingIfNeeded: bytes.count)
        bytes.append(contentsOf: UnsafeBufferPointer(start: pointer, count: count))
        return Span(start: start, count: UInt32(truncatingIfNeeded: count))
    }

    mutating func append(_ buffer: UnsafeBufferPointer<UInt8>) -> Span {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return .empty }
        return append(base, count: buffer.count)
    }
}
