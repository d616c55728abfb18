import CExpat

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The state of one parse and what expat's callbacks do to it.
///
/// It lives behind a pointer owned by ``XMPPStreamParser``: the callbacks reach it through expat's user data.
/// Each callback method is a short mutation that returns the event to deliver, if any; the trampolines call the
/// receiver's handler only after the mutation has ended, so the receiver may look at the parser freely.
struct StreamEngine {
    let configuration: XMPPStreamParser.Configuration
    let expat: XML_Parser

    var header: StreamHeader?
    var error: XMPPStreamError?
    var isClosed = false
    var bytesFed = 0
    var finished = false
    var eventHandler: ((XMPPStreamEvent) -> Void)?

    var prologue: StreamPrologue?
    var prologueBytes: [UInt8] = []
    /// Implicit streams: where the synthetic header went, to map expat positions back to the input.
    var syntheticHeader: (offset: Int, length: Int, line: Int, column: Int)?
    /// When ``XMPPStreamParser/finish(_:)`` closes the stream itself: the expat offset where that synthetic
    /// closing tag starts, which is the end of the input. Errors expat finds inside the closing tag are reported
    /// there, never past the input.
    var syntheticTrailerOffset: Int?
    /// The qualified name of the stream element as written, to close it when the input just stops.
    var rootName: [UInt8] = []
    /// Input bytes handed to expat (synthetic bytes excluded).
    var bytesParsed = 0
    var depth = 0
    /// Where the bytes that no delivered event accounts for begin: the end of the last stanza, or of the
    /// whitespace after it. The size limit counts from here while no stanza is open.
    var boundaryOffset = 0

    private var declaredDefaultNamespace: [UInt8]?
    private var streamLanguage: [UInt8]?

    // The stanza under construction.
    private(set) var stanza = Stanza()
    /// Stanzas handed back by a caller that kept them (``XMPPStreamParser/recycle(_:)``): the next stanzas are
    /// built in their memory instead of fresh allocations.
    var spareStanzas: [Stanza] = []
    private var openElements: [Int32] = []
    private var stanzaStartTagEnd = 0

    init(configuration: XMPPStreamParser.Configuration) {
        self.configuration = configuration
        // Forcing UTF-8 makes expat ignore any declared encoding; a non-UTF-8 declaration is refused in
        // `xmlDeclaration`. The separator cannot occur in XML names or namespace names.
        expat = XML_ParserCreateNS("UTF-8", XML_Char(bitPattern: Expat.namespaceSeparator))
        if let disableDeferral = Expat.setReparseDeferralEnabled {
            _ = disableDeferral(expat, 0)
        }
    }

    // MARK: Errors and positions

    /// Records the first error; later ones are consequences of it.
    @discardableResult
    mutating func fail(
        _ condition: XMPPStreamError.Condition, _ message: String, at position: SourcePosition,
        limit: XMPPStreamLimits.Kind? = nil
    ) -> XMPPStreamError {
        if error == nil { error = XMPPStreamError(condition, message, at: position, limit: limit) }
        return error!
    }

    /// Records an error found inside a callback and stops expat; `XML_Parse` then returns with an error.
    mutating func abort(
        _ condition: XMPPStreamError.Condition, _ message: String, at position: SourcePosition? = nil,
        limit: XMPPStreamLimits.Kind? = nil
    ) {
        fail(condition, message, at: position ?? currentPosition(), limit: limit)
        XML_StopParser(expat, 0)
    }

    mutating func expatFailure() -> XMPPStreamError {
        let code = XML_GetErrorCode(expat)
        return fail(Expat.condition(for: code), String(cString: XML_ErrorString(code)), at: currentPosition())
    }

    /// The position of the event being reported (inside a callback) or where expat stopped consuming.
    func currentPosition() -> SourcePosition {
        mapPosition(
            line: Int(XML_GetCurrentLineNumber(expat)), column: Int(XML_GetCurrentColumnNumber(expat)),
            offset: Int(XML_GetCurrentByteIndex(expat)))
    }

    /// Translates an expat position (which counts synthetic bytes, and 0-based columns) into one in the input.
    func mapPosition(line: Int, column: Int, offset: Int) -> SourcePosition {
        if let trailer = syntheticTrailerOffset, offset > trailer {
            // The closing tag has no line breaks: the end of the input is on the same line, that many bytes back.
            return mapPosition(line: line, column: max(column - (offset - trailer), 0), offset: trailer)
        }
        var position = SourcePosition(line: line, column: column + 1, byteOffset: offset < 0 ? bytesParsed : offset)
        guard let header = syntheticHeader, offset >= header.offset else { return position }
        if offset >= header.offset + header.length {
            position.byteOffset -= header.length
            if line == header.line { position.column -= header.length }
        } else {
            position = SourcePosition(line: header.line, column: header.column + 1, byteOffset: header.offset)
        }
        return position
    }

    func inputOffset(_ expatOffset: Int) -> Int {
        guard let header = syntheticHeader, expatOffset >= header.offset else { return expatOffset }
        return max(expatOffset - header.length, header.offset)
    }

    /// The input offset just past the event being reported.
    private func eventEndOffset() -> Int {
        inputOffset(Int(XML_GetCurrentByteIndex(expat)) + Int(XML_GetCurrentByteCount(expat)))
    }

    // MARK: Callbacks: XML declaration, namespaces, text

    mutating func xmlDeclaration(encoding: UnsafePointer<XML_Char>?) {
        guard let encoding else { return }
        let name = String(cString: encoding)
        if name.lowercased() != "utf-8" {
            abort(.unsupportedEncoding, "encoding '\(name)' declared; XMPP streams are UTF-8")
        }
    }

    mutating func namespaceDeclaration(prefix: UnsafePointer<XML_Char>?, uri: UnsafePointer<XML_Char>?) {
        guard depth == 0, prefix == nil else { return }
        declaredDefaultNamespace = uri.map { Array(UnsafeRawBufferPointer(start: $0, count: strlen($0))) } ?? []
    }

    mutating func characterData(_ text: UnsafePointer<XML_Char>, _ length: Int) {
        if depth >= 2 {
            guard let open = openElements.last else { return }
            stanza.appendText(
                UnsafeBufferPointer(start: UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self), count: length),
                to: open)
        } else {
            // Whitespace (or stray text) between stanzas has been consumed: none of it is pending any more.
            boundaryOffset = eventEndOffset()
        }
    }

    // MARK: Callbacks: elements

    mutating func startElement(
        _ name: UnsafePointer<XML_Char>, _ attributes: UnsafeMutablePointer<UnsafePointer<XML_Char>?>
    ) -> XMPPStreamEvent? {
        depth += 1
        if depth == 1 { return openStream(name, attributes) }
        startStanzaElement(name, attributes)
        return nil
    }

    mutating func endElement() -> XMPPStreamEvent? {
        defer { depth -= 1 }
        if depth == 1 {
            isClosed = true
            boundaryOffset = eventEndOffset()
            return .streamClosed
        }
        return endStanzaElement()
    }

    private mutating func openStream(
        _ name: UnsafePointer<XML_Char>, _ attributes: UnsafeMutablePointer<UnsafePointer<XML_Char>?>
    ) -> XMPPStreamEvent? {
        let root = QualifiedName(name)
        guard root.localName.elementsEqual("stream".utf8), root.namespace.elementsEqual(XMPPNamespace.streams.utf8)
        else {
            abort(
                .invalidNamespace,
                "the stream must start with <stream:stream> in \(XMPPNamespace.streams), "
                    + "not <\(root.localName.string)> in '\(root.namespace.string)'")
            return nil
        }
        let declared = declaredDefaultNamespace.map { String(decoding: $0, as: UTF8.self) }
        guard let declared, XMPPNamespace.contentNamespaces.contains(declared) else {
            abort(
                .invalidNamespace,
                "the stream's default namespace must be jabber:client, jabber:server or "
                    + "jabber:component:accept (declared: \(declared.map { "'\($0)'" } ?? "none"))")
            return nil
        }
        var header = StreamHeader(contentNamespace: declared, isImplicit: syntheticHeader != nil)
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
        boundaryOffset = eventEndOffset()
        self.header = header
        return .streamOpened(header)
    }

    private mutating func startStanzaElement(
        _ name: UnsafePointer<XML_Char>, _ attributes: UnsafeMutablePointer<UnsafePointer<XML_Char>?>
    ) {
        let limits = configuration.limits
        if depth == 2 {
            let eventOffset = Int(XML_GetCurrentByteIndex(expat))
            let position = mapPosition(
                line: Int(XML_GetCurrentLineNumber(expat)), column: Int(XML_GetCurrentColumnNumber(expat)),
                offset: eventOffset)
            // The last stanza may still be held by whoever got it; build this one in a returned one, if any.
            if let spare = spareStanzas.popLast() { stanza = spare }
            stanza.reset(position: position)
            openElements.removeAll(keepingCapacity: true)
            stanzaStartTagEnd = inputOffset(eventOffset + Int(XML_GetCurrentByteCount(expat)))
        } else {
            if depth - 1 > limits.maxElementDepth {
                return abort(
                    .policyViolation, "elements nested deeper than \(limits.maxElementDepth) inside a stanza",
                    limit: .elementDepth)
            }
            if stanza.elements.count > limits.maxChildElements {
                return abort(
                    .policyViolation, "more than \(limits.maxChildElements) child elements in one stanza",
                    limit: .childElements)
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
            let valueSpan = stanza.append(UnsafeRawBufferPointer(start: value, count: strlen(value)))
            let attributeNamespace =
                attribute.namespace.isEmpty ? Stanza.Span.empty : stanza.append(attribute.namespace)
            stanza.attributes.append(
                .init(
                    namespace: attributeNamespace, localName: stanza.append(attribute.localName), value: valueSpan))
            if attribute.isXMLLang {
                language = valueSpan
                hasLanguage = true
            }
            index += 2
        }
        let elementIndex = Int32(stanza.elements.count)
        stanza.elements.append(
            .init(
                namespace: namespace, localName: localName, language: language, hasLanguage: hasLanguage, text: .empty,
                firstAttribute: firstAttribute, attributeCount: Int32(stanza.attributes.count) - firstAttribute,
                subtreeEnd: elementIndex + 1))
        openElements.append(elementIndex)
    }

    private mutating func endStanzaElement() -> XMPPStreamEvent? {
        guard let elementIndex = openElements.popLast() else { return nil }
        stanza.elements[Int(elementIndex)].subtreeEnd = Int32(stanza.elements.count)
        guard depth == 2 else { return nil }
        let byteCount = Int(XML_GetCurrentByteCount(expat))
        let end = byteCount > 0 ? eventEndOffset() : stanzaStartTagEnd
        stanza.byteCount = end - stanza.position.byteOffset
        boundaryOffset = end
        let limit = configuration.limits.maxStanzaBytes
        if stanza.byteCount > limit {
            abort(
                .policyViolation, "stanza <\(stanza.localName(of: stanza.root))> exceeds \(limit) bytes",
                at: stanza.position, limit: .stanzaBytes)
            return nil
        }
        return .stanza(stanza)
    }
}

extension Stanza {
    /// Adds character data to an element's text. Text nearly always arrives in one piece or in consecutive
    /// pieces, so it is appended in place; only mixed content (text after a child element) moves it.
    mutating func appendText(_ text: UnsafeBufferPointer<UInt8>, to element: Int32) {
        let current = elements[Int(element)].text
        if current.count == 0 {
            elements[Int(element)].text = append(text)
        } else if Int(current.start + current.count) == bytes.count {
            _ = append(text)
            elements[Int(element)].text.count += UInt32(truncatingIfNeeded: text.count)
        } else {
            let start = UInt32(truncatingIfNeeded: bytes.count)
            bytes.append(contentsOf: bytes[Int(current.start) ..< Int(current.start + current.count)])
            _ = append(text)
            elements[Int(element)].text = Span(start: start, count: UInt32(truncatingIfNeeded: bytes.count) - start)
        }
    }

    mutating func append(_ buffer: UnsafeRawBufferPointer) -> Span {
        append(UnsafeBufferPointer(start: buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), count: buffer.count))
    }
}
