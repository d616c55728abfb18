import CExpat

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An incremental XMPP stream parser on libexpat.
///
/// Feed it the bytes of one stream in chunks of any size, as they arrive; every complete top-level element is
/// delivered as a ``Stanza`` as soon as its end tag has been fed, even when that is the last byte fed so far.
/// A stream may start with a `<stream:stream>` header or, for files of captured stanzas, with the first stanza
/// (an implicit stream in ``Configuration/implicitContentNamespace``).
///
/// The parser enforces RFC 6120 §11.1 restricted XML (no DTD, entity declarations, comments or processing
/// instructions; no entity is ever expanded) and the limits of ``XMPPStreamLimits``. The first problem ends the
/// stream with a typed ``XMPPStreamError``; events delivered before it stay delivered, and later calls throw
/// the same error.
///
/// A parser belongs to one stream and one thread of control at a time; it is not `Sendable`.
public final class XMPPStreamParser {
    /// How a parser treats its input.
    public struct Configuration: Hashable, Sendable {
        public var limits: XMPPStreamLimits
        /// The content namespace assumed for input without a stream header.
        public var implicitContentNamespace: String

        public init(limits: XMPPStreamLimits = XMPPStreamLimits(), implicitContentNamespace: String = XMPPNamespace.client) {
            self.limits = limits
            self.implicitContentNamespace = implicitContentNamespace
        }
    }

    public let configuration: Configuration
    /// The header of the stream, once it has been read.
    public private(set) var header: StreamHeader?
    /// The error that ended the stream, if any.
    public private(set) var error: XMPPStreamError?
    /// Whether the stream's closing tag has been read.
    public private(set) var isClosed = false
    /// How many input bytes have been accepted.
    public private(set) var bytesFed = 0

    private let expat: XML_Parser
    private var prologue: StreamPrologue?
    private var prologueBytes: [UInt8] = []
    /// Implicit streams: where the synthetic header went, to map expat positions back to the input.
    private var syntheticHeader: (offset: Int, length: Int, line: Int, column: Int)?
    /// Input bytes handed to expat (synthetic bytes excluded).
    private var bytesParsed = 0
    private var depth = 0
    private var finished = false
    private var eventHandler: ((XMPPStreamEvent) -> Void)?

    // Stream header state.
    private var declaredDefaultNamespace: [UInt8]?
    private var streamLanguage: [UInt8]?

    // Stanza under construction.
    private var stanza = Stanza()
    private var openElements: [Int32] = []
    private var textBuffer: [UInt8] = []
    private var textMarks: [Int] = []
    private var stanzaStartTagEnd = 0

    /// Where the bytes that no delivered event accounts for begin: the end of the last stanza (or of the
    /// whitespace after it). The size limit counts from here while no stanza is open.
    private var boundaryOffset = 0

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        // Forcing UTF-8 makes expat ignore any declared encoding; a non-UTF-8 declaration is refused below.
        expat = XML_ParserCreateNS("UTF-8", XML_Char(bitPattern: Expat.namespaceSeparator))
        if let disableDeferral = Expat.setReparseDeferralEnabled {
            _ = disableDeferral(expat, 0)
        }
        XML_SetUserData(expat, Unmanaged.passUnretained(self).toOpaque())
        installHandlers()
    }

    deinit {
        XML_ParserFree(expat)
    }

    // MARK: Feeding

    /// Parses the next chunk of the stream, calling `handler` for every event it completes.
    public func feed(_ bytes: UnsafeRawBufferPointer, _ handler: (XMPPStreamEvent) -> Void) throws(XMPPStreamError) {
        if let error { throw error }
        precondition(!finished, "feed(_:_:) after finish(_:)")
        try withHandler(handler) { () throws(XMPPStreamError) in
            bytesFed += bytes.count
            try route(UnsafeBufferPointer(start: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), count: bytes.count))
        }
    }

    /// Parses the next chunk of the stream, calling `handler` for every event it completes.
    public func feed(_ bytes: some Sequence<UInt8>, _ handler: (XMPPStreamEvent) -> Void) throws(XMPPStreamError) {
        let result: Result<Void, XMPPStreamError>? = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(XMPPStreamError) in try feed(UnsafeRawBufferPointer(buffer), handler) }
        }
        if let result { return try result.get() }
        let copy = Array(bytes)
        try copy.withUnsafeBytes { buffer in
            Result { () throws(XMPPStreamError) in try feed(buffer, handler) }
        }.get()
    }

    /// Ends the input. An implicit stream, or an explicit one whose closing tag never came, is closed; input
    /// that stops inside a stanza or a tag is a `not-well-formed` error.
    public func finish(_ handler: (XMPPStreamEvent) -> Void) throws(XMPPStreamError) {
        if let error { throw error }
        guard !finished else { return }
        finished = true
        try withHandler(handler) { () throws(XMPPStreamError) in
            if prologue == nil {
                if StreamPrologue.isBlank(prologueBytes) { return }
                prologue = .unrecognised
                let buffered = prologueBytes
                prologueBytes = []
                try feedToExpat(buffered)
            }
            if depth >= 2 {
                let name = stanza.localName(of: stanza.root)
                throw fail(.notWellFormed, "input ended inside <\(name)> that started at \(stanza.position)", at: stanza.position)
            }
            let closingTag: [UInt8]
            switch prologue {
            case .explicit(let rootName) where depth == 1:
                closingTag = Array("</".utf8) + rootName + Array(">".utf8)
            case .implicit where depth == 1:
                closingTag = Array("</stream:stream>".utf8)
            default:
                closingTag = []
            }
            let status = closingTag.withUnsafeBufferPointer {
                XML_Parse(expat, UnsafeRawPointer($0.baseAddress)?.assumingMemoryBound(to: CChar.self), Int32($0.count), 1)
            }
            if let error { throw error }
            if status != XML_STATUS_OK {
                if depth >= 1 {
                    throw fail(.notWellFormed, "input ended inside a tag", at: currentPosition())
                }
                throw expatFailure()
            }
        }
    }

    // MARK: - Routing input

    private func withHandler(
        _ handler: (XMPPStreamEvent) -> Void, _ body: () throws(XMPPStreamError) -> Void
    ) throws(XMPPStreamError) {
        let result: Result<Void, XMPPStreamError> = withoutActuallyEscaping(handler) { handler in
            eventHandler = handler
            defer { eventHandler = nil }
            return Result { () throws(XMPPStreamError) in try body() }
        }
        try result.get()
    }

    private func route(_ bytes: UnsafeBufferPointer<UInt8>) throws(XMPPStreamError) {
        guard prologue == nil else { return try parse(bytes, synthetic: false) }
        prologueBytes.append(contentsOf: bytes)
        let decision = prologueBytes.withUnsafeBufferPointer { StreamPrologue.classify($0) }
        guard let decision else {
            if prologueBytes.count > configuration.limits.maxStanzaBytes {
                throw fail(.policyViolation, "no complete start tag within the first \(configuration.limits.maxStanzaBytes) bytes",
                           at: SourcePosition(line: 1, column: 1, byteOffset: 0), limit: .stanzaBytes)
            }
            return
        }
        prologue = decision
        let buffered = prologueBytes
        prologueBytes = []
        guard case .implicit(let offset) = decision else { return try feedToExpat(buffered) }
        try feedToExpat(Array(buffered[..<offset]))
        let header = Array(
            "<stream:stream xmlns='\(configuration.implicitContentNamespace)' xmlns:stream='\(XMPPNamespace.streams)'>".utf8)
        let prefix = buffered[..<offset]
        let line = 1 + prefix.lazy.filter { $0 == 0x0A }.count
        let lineStart = (prefix.lastIndex(of: 0x0A).map { $0 + 1 }) ?? 0
        let column = prefix[lineStart...].lazy.filter { $0 & 0xC0 != 0x80 && $0 != 0xEF && $0 != 0xBB && $0 != 0xBF }.count
        syntheticHeader = (offset, header.count, line, column)
        try header.withUnsafeBufferPointer { (buffer) throws(XMPPStreamError) in try parse(buffer, synthetic: true) }
        try feedToExpat(Array(buffered[offset...]))
    }

    private func feedToExpat(_ bytes: [UInt8]) throws(XMPPStreamError) {
        try bytes.withUnsafeBufferPointer { (buffer) throws(XMPPStreamError) in try parse(buffer, synthetic: false) }
    }

    /// Hands bytes to expat in slices small enough that a stanza over the size limit is caught before expat
    /// has buffered more than one byte past the limit.
    private func parse(_ bytes: UnsafeBufferPointer<UInt8>, synthetic: Bool) throws(XMPPStreamError) {
        guard let base = bytes.baseAddress else { return }
        let limit = configuration.limits.maxStanzaBytes
        var start = 0
        while start < bytes.count {
            let windowStart = depth >= 2 ? stanza.position.byteOffset : boundaryOffset
            let allowed = synthetic ? Int.max : max(windowStart + limit + 1 - bytesParsed, 1)
            let end = start + min(bytes.count - start, allowed, 1 << 20)
            let pointer = UnsafeRawPointer(base + start).assumingMemoryBound(to: CChar.self)
            let status = XML_Parse(expat, pointer, Int32(end - start), 0)
            if !synthetic { bytesParsed += end - start }
            if let error { throw error }
            if status != XML_STATUS_OK { throw expatFailure() }
            start = end
            if !synthetic { try checkPendingSize() }
        }
    }

    /// Raises `policy-violation` when the bytes since the open stanza's start (or, between stanzas, since the
    /// last boundary) exceed the limit.
    private func checkPendingSize() throws(XMPPStreamError) {
        let limit = configuration.limits.maxStanzaBytes
        if depth >= 2 {
            if bytesParsed - stanza.position.byteOffset > limit {
                throw fail(.policyViolation, "stanza <\(stanza.localName(of: stanza.root))> exceeds \(limit) bytes",
                           at: stanza.position, limit: .stanzaBytes)
            }
        } else if bytesParsed - boundaryOffset > limit {
            var position = currentPosition()
            position.byteOffset = boundaryOffset
            throw fail(.policyViolation, "more than \(limit) bytes without a complete stanza (a tag or text too large)",
                       at: position, limit: .stanzaBytes)
        }
    }

    // MARK: - Errors and positions

    @discardableResult
    private func fail(
        _ condition: XMPPStreamError.Condition, _ message: String, at position: SourcePosition,
        limit: XMPPStreamLimits.Kind? = nil
    ) -> XMPPStreamError {
        let failure = XMPPStreamError(condition, message, at: position, limit: limit)
        if error == nil { error = failure }
        return error!
    }

    /// Records an error raised inside a callback and stops expat; `XML_Parse` then returns and `parse` throws it.
    private func abort(
        _ condition: XMPPStreamError.Condition, _ message: String, at position: SourcePosition? = nil,
        limit: XMPPStreamLimits.Kind? = nil
    ) {
        fail(condition, message, at: position ?? currentPosition(), limit: limit)
        XML_StopParser(expat, 0)
    }

    private func expatFailure() -> XMPPStreamError {
        let code = XML_GetErrorCode(expat)
        let message = String(cString: XML_ErrorString(code))
        return fail(Expat.condition(for: code), message, at: currentPosition())
    }

    /// The position of the event being reported (inside a callback) or of the end of what expat consumed.
    private func currentPosition() -> SourcePosition {
        mapPosition(
            line: Int(XML_GetCurrentLineNumber(expat)), column: Int(XML_GetCurrentColumnNumber(expat)),
            offset: Int(XML_GetCurrentByteIndex(expat)))
    }

    /// Translates an expat position (which counts synthetic bytes) into one in the caller's input.
    private func mapPosition(line: Int, column: Int, offset: Int) -> SourcePosition {
        var position = SourcePosition(line: line, column: column + 1, byteOffset: offset)
        if offset < 0 { position.byteOffset = bytesParsed }
        guard let header = syntheticHeader, offset >= header.offset else { return position }
        if offset >= header.offset + header.length {
            position.byteOffset -= header.length
            if line == header.line { position.column -= header.length }
        } else {
            position = SourcePosition(line: header.line, column: header.column + 1, byteOffset: header.offset)
        }
        return position
    }

    private func inputOffset(_ expatOffset: Int) -> Int {
        guard let header = syntheticHeader, expatOffset >= header.offset else { return expatOffset }
        return max(expatOffset - header.length, header.offset)
    }

    // MARK: - Callbacks

    private func installHandlers() {
        XML_SetElementHandler(
            expat,
            { userData, name, attributes in
                XMPPStreamParser.from(userData).startElement(name!, attributes!)
            },
            { userData, name in
                XMPPStreamParser.from(userData).endElement()
            })
        XML_SetCharacterDataHandler(expat) { userData, text, length in
            XMPPStreamParser.from(userData).characterData(text!, Int(length))
        }
        XML_SetStartNamespaceDeclHandler(expat) { userData, prefix, uri in
            XMPPStreamParser.from(userData).namespaceDeclaration(prefix: prefix, uri: uri)
        }
        XML_SetXmlDeclHandler(expat) { userData, _, encoding, _ in
            XMPPStreamParser.from(userData).xmlDeclaration(encoding: encoding)
        }
        XML_SetStartDoctypeDeclHandler(expat) { userData, _, _, _, _ in
            XMPPStreamParser.from(userData).abort(.restrictedXML, "a DOCTYPE (document type declaration) is not allowed")
        }
        XML_SetEntityDeclHandler(expat) { userData, _, _, _, _, _, _, _, _ in
            XMPPStreamParser.from(userData).abort(.restrictedXML, "entity declarations are not allowed")
        }
        XML_SetCommentHandler(expat) { userData, _ in
            XMPPStreamParser.from(userData).abort(.restrictedXML, "comments are not allowed")
        }
        XML_SetProcessingInstructionHandler(expat) { userData, _, _ in
            XMPPStreamParser.from(userData).abort(.restrictedXML, "processing instructions are not allowed")
        }
        XML_SetSkippedEntityHandler(expat) { userData, _, _ in
            XMPPStreamParser.from(userData).abort(.restrictedXML, "entity references are not allowed")
        }
        XML_SetParamEntityParsing(expat, XML_PARAM_ENTITY_PARSING_NEVER)
    }

    private static func from(_ userData: UnsafeMutableRawPointer?) -> XMPPStreamParser {
        Unmanaged<XMPPStreamParser>.fromOpaque(userData!).takeUnretainedValue()
    }

    private func xmlDeclaration(encoding: UnsafePointer<XML_Char>?) {
        guard let encoding else { return }
        let name = String(cString: encoding)
        if name.lowercased() != "utf-8" {
            abort(.unsupportedEncoding, "encoding '\(name)' declared; XMPP streams are UTF-8")
        }
    }

    private func namespaceDeclaration(prefix: UnsafePointer<XML_Char>?, uri: UnsafePointer<XML_Char>?) {
        guard depth == 0, prefix == nil else { return }
        declaredDefaultNamespace = uri.map { Array(UnsafeBufferPointer(start: $0.withMemoryRebound(to: UInt8.self, capacity: 1) { $0 }, count: strlen($0))) } ?? []
    }

    private func startElement(_ name: UnsafePointer<XML_Char>, _ attributes: UnsafeMutablePointer<UnsafePointer<XML_Char>?>) {
        depth += 1
        switch depth {
        case 1: openStream(name, attributes)
        default: startStanzaElement(name, attributes)
        }
    }

    private func endElement() {
        defer { depth -= 1 }
        switch depth {
        case 1:
            isClosed = true
            boundaryOffset = bytesParsed
            eventHandler?(.streamClosed)
        default:
            endStanzaElement()
        }
    }

    private func characterData(_ text: UnsafePointer<XML_Char>, _ length: Int) {
        if depth >= 2 {
            text.withMemoryRebound(to: UInt8.self, capacity: length) {
                textBuffer.append(contentsOf: UnsafeBufferPointer(start: $0, count: length))
            }
        } else {
            // Whitespace (or stray text) between stanzas has been consumed: nothing of it is pending any more.
            boundaryOffset = inputOffset(Int(XML_GetCurrentByteIndex(expat)) + Int(XML_GetCurrentByteCount(expat)))
        }
    }

    // MARK: Stream header

    private func openStream(_ name: UnsafePointer<XML_Char>, _ attributes: UnsafeMutablePointer<UnsafePointer<XML_Char>?>) {
        let root = QualifiedName(name)
        guard root.localName.elementsEqual("stream".utf8), root.namespace.elementsEqual(XMPPNamespace.streams.utf8) else {
            return abort(.invalidNamespace,
                         "the stream must start with <stream:stream> in \(XMPPNamespace.streams), not <\(root.localName.string)> in '\(root.namespace.string)'")
        }
        guard let defaultNamespace = declaredDefaultNamespace.map({ String(decoding: $0, as: UTF8.self) }),
              XMPPNamespace.contentNamespaces.contains(defaultNamespace)
        else {
            let declared = declaredDefaultNamespace.map { "'\(String(decoding: $0, as: UTF8.self))'" } ?? "none"
            return abort(.invalidNamespace,
                         "the stream's default namespace must be jabber:client, jabber:server or jabber:component:accept (declared: \(declared))")
        }
        var header = StreamHeader(contentNamespace: defaultNamespace, isImplicit: syntheticHeader != nil)
        var index = 0
        while let attributeName = attributes[index], let value = attributes[index + 1] {
            let attribute = QualifiedName(attributeName)
            let string = String(cString: value)
            if attribute.namespace.isEmpty {
                switch attribute.localName.string {
                case "from": header.from = string
                case "to": header.to = string
                case "id": header.id = string
                case "version": header.version = string
                default: break
                }
            } else if attribute.isXMLLang {
                header.language = string
                streamLanguage = Array(string.utf8)
            }
            index += 2
        }
        boundaryOffset = inputOffset(Int(XML_GetCurrentByteIndex(expat)) + Int(XML_GetCurrentByteCount(expat)))
        self.header = header
        eventHandler?(.streamOpened(header))
    }

    // MARK: Stanza building

    private func startStanzaElement(_ name: UnsafePointer<XML_Char>, _ attributes: UnsafeMutablePointer<UnsafePointer<XML_Char>?>) {
        let limits = configuration.limits
        let eventOffset = Int(XML_GetCurrentByteIndex(expat))
        if depth == 2 {
            let position = mapPosition(
                line: Int(XML_GetCurrentLineNumber(expat)), column: Int(XML_GetCurrentColumnNumber(expat)), offset: eventOffset)
            stanza.reset(position: position)
            openElements.removeAll(keepingCapacity: true)
            textBuffer.removeAll(keepingCapacity: true)
            textMarks.removeAll(keepingCapacity: true)
            stanzaStartTagEnd = inputOffset(eventOffset + Int(XML_GetCurrentByteCount(expat)))
        } else {
            if depth - 1 > limits.maxElementDepth {
                return abort(.policyViolation, "elements nested deeper than \(limits.maxElementDepth) inside a stanza", limit: .elementDepth)
            }
            if stanza.elements.count > limits.maxChildElements {
                return abort(.policyViolation, "more than \(limits.maxChildElements) child elements in one stanza", limit: .childElements)
            }
        }
        let qualified = QualifiedName(name)
        let parent = openElements.last.map { stanza.elements[Int($0)] }
        // Children nearly always share their parent's namespace: reuse its bytes instead of copying them again.
        let namespace: Stanza.Span
        if let parent, stanza.equals(parent.namespace, qualified.namespace) {
            namespace = parent.namespace
        } else {
            namespace = stanza.append(qualified.namespace)
        }
        let localName = stanza.append(qualified.localName)
        var language = parent?.language ?? .empty
        var hasLanguage = parent?.hasLanguage ?? false
        if parent == nil, let streamLanguage {
            language = streamLanguage.withUnsafeBufferPointer { stanza.append($0) }
            hasLanguage = true
        }
        let firstAttribute = Int32(stanza.attributes.count)
        var index = 0
        while let attributeName = attributes[index], let value = attributes[index + 1] {
            let attribute = QualifiedName(attributeName)
            let valueSpan = value.withMemoryRebound(to: UInt8.self, capacity: 1) { stanza.append($0, count: strlen(value)) }
            let attributeNamespace = attribute.namespace.isEmpty ? .empty : stanza.append(attribute.namespace)
            stanza.attributes.append(.init(namespace: attributeNamespace, localName: stanza.append(attribute.localName), value: valueSpan))
            if attribute.isXMLLang {
                language = valueSpan
                hasLanguage = true
            }
            index += 2
        }
        let elementIndex = Int32(stanza.elements.count)
        stanza.elements.append(.init(
            namespace: namespace, localName: localName, language: language, hasLanguage: hasLanguage, text: .empty,
            firstAttribute: firstAttribute, attributeCount: Int32(stanza.attributes.count) - firstAttribute,
            subtreeEnd: elementIndex + 1))
        openElements.append(elementIndex)
        textMarks.append(textBuffer.count)
    }

    private func endStanzaElement() {
        guard let elementIndex = openElements.popLast(), let mark = textMarks.popLast() else { return }
        if textBuffer.count > mark {
            let text = textBuffer[mark...].withUnsafeBufferPointer { stanza.append($0) }
            stanza.elements[Int(elementIndex)].text = text
            textBuffer.removeSubrange(mark...)
        }
        stanza.elements[Int(elementIndex)].subtreeEnd = Int32(stanza.elements.count)
        guard depth == 2 else { return }
        let byteCount = Int(XML_GetCurrentByteCount(expat))
        let end = byteCount > 0 ? inputOffset(Int(XML_GetCurrentByteIndex(expat)) + byteCount) : stanzaStartTagEnd
        stanza.byteCount = end - stanza.position.byteOffset
        boundaryOffset = end
        let limit = configuration.limits.maxStanzaBytes
        if stanza.byteCount > limit {
            return abort(.policyViolation, "stanza <\(stanza.localName(of: stanza.root))> exceeds \(limit) bytes",
                         at: stanza.position, limit: .stanzaBytes)
        }
        eventHandler?(.stanza(stanza))
    }
}

/// A name as expat reports it with namespace processing: `namespace SEP localName`, or just `localName`.
private struct QualifiedName {
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

    var isXMLLang: Bool {
        localName.elementsEqual("lang".utf8) && namespace.elementsEqual(XMPPNamespace.xml.utf8)
    }
}

extension UnsafeBufferPointer<UInt8> {
    fileprivate var string: String { String(decoding: self, as: UTF8.self) }
}

extension Stanza {
    fileprivate func equals(_ span: Span, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard Int(span.count) == bytes.count else { return false }
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return true }
        return self.bytes.withUnsafeBufferPointer { memcmp($0.baseAddress! + Int(span.start), base, bytes.count) == 0 }
    }
}
