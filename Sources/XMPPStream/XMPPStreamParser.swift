import CExpat

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

        public init(
            limits: XMPPStreamLimits = XMPPStreamLimits(), implicitContentNamespace: String = XMPPNamespace.client
        ) {
            self.limits = limits
            self.implicitContentNamespace = implicitContentNamespace
        }
    }

    public let configuration: Configuration
    /// The header of the stream, once it has been read.
    public var header: StreamHeader? { engine.pointee.header }
    /// The error that ended the stream, if any.
    public var error: XMPPStreamError? { engine.pointee.error }
    /// Whether the stream's closing tag has been read.
    public var isClosed: Bool { engine.pointee.isClosed }
    /// How many input bytes have been accepted.
    public var bytesFed: Int { engine.pointee.bytesFed }

    /// The parse state lives behind a stable pointer that expat's callbacks reach through their user data.
    /// Mutating it through the pointer, in short accesses that never span an `XML_Parse` call, avoids the
    /// dynamic exclusivity checks class properties would cost on every callback (about a fifth of the parse
    /// time, measured) without overlapping accesses.
    private let engine: UnsafeMutablePointer<StreamEngine>

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        engine = .allocate(capacity: 1)
        engine.initialize(to: StreamEngine(configuration: configuration))
        installCallbacks()
    }

    deinit {
        XML_ParserFree(engine.pointee.expat)
        engine.deinitialize(count: 1)
        engine.deallocate()
    }

    /// The most stanzas ``recycle(_:)`` keeps.
    public static let maximumSpareStanzas = 4096

    /// Gives back a stanza this parser delivered, once its receiver is done with it, so that a later stanza is
    /// built in its memory: a receiver that keeps stanzas (a replay decodes them on another thread) would
    /// otherwise make the parser allocate every stanza anew. Optional; a receiver that does not keep stanzas
    /// need not call it. Large stanzas are not kept, and at most ``maximumSpareStanzas`` are.
    public func recycle(_ stanza: consuming Stanza) {
        guard engine.pointee.spareStanzas.count < XMPPStreamParser.maximumSpareStanzas, stanza.isSmallEnoughToReuse
        else { return }
        engine.pointee.spareStanzas.append(stanza)
    }

    // MARK: Feeding

    /// Parses the next chunk of the stream, calling `handler` for every event it completes.
    public func feed(_ bytes: UnsafeRawBufferPointer, _ handler: (XMPPStreamEvent) -> Void) throws(XMPPStreamError) {
        if let error { throw error }
        precondition(!engine.pointee.finished, "feed(_:_:) after finish(_:)")
        engine.pointee.bytesFed += bytes.count
        try withHandler(handler) { () throws(XMPPStreamError) in
            try route(
                UnsafeBufferPointer(start: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), count: bytes.count))
        }
    }

    /// Parses the next chunk of the stream, calling `handler` for every event it completes.
    public func feed(_ bytes: some Sequence<UInt8>, _ handler: (XMPPStreamEvent) -> Void) throws(XMPPStreamError) {
        let result: Result<Void, XMPPStreamError>? = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(XMPPStreamError) in try feed(UnsafeRawBufferPointer(buffer), handler) }
        }
        if let result { return try result.get() }
        try Array(bytes).withUnsafeBytes { buffer in
            Result { () throws(XMPPStreamError) in try feed(buffer, handler) }
        }.get()
    }

    /// Ends the input. An implicit stream, or an explicit one whose closing tag never came, is closed; input
    /// that stops inside a stanza or a tag is a `not-well-formed` error.
    public func finish(_ handler: (XMPPStreamEvent) -> Void) throws(XMPPStreamError) {
        if let error { throw error }
        guard !engine.pointee.finished else { return }
        engine.pointee.finished = true
        try withHandler(handler) { () throws(XMPPStreamError) in
            if engine.pointee.prologue == nil {
                let buffered = engine.pointee.prologueBytes
                if StreamPrologue.isBlank(buffered) { return }
                engine.pointee.prologue = .unrecognised
                engine.pointee.prologueBytes = []
                try parse(buffered, synthetic: false)
            }
            let depth = engine.pointee.depth
            if depth >= 2 {
                let stanza = engine.pointee.stanza
                throw engine.pointee.fail(
                    .notWellFormed,
                    "input ended inside <\(stanza.localName(of: stanza.root))> that started at \(stanza.position)",
                    at: stanza.position)
            }
            // Close the stream element ourselves: a capture that just stops between stanzas is complete.
            let closingTag = depth == 1 ? Array("</".utf8) + engine.pointee.rootName + Array(">".utf8) : []
            engine.pointee.syntheticTrailerOffset =
                engine.pointee.bytesParsed + (engine.pointee.syntheticHeader?.length ?? 0)
            let status = closingTag.withUnsafeBufferPointer {
                XML_Parse(
                    engine.pointee.expat, UnsafeRawPointer($0.baseAddress)?.assumingMemoryBound(to: CChar.self),
                    Int32($0.count), 1)
            }
            if let error { throw error }
            if status != XML_STATUS_OK {
                if depth == 1 {
                    let inside =
                        XML_GetErrorCode(engine.pointee.expat) == XML_ERROR_UNCLOSED_CDATA_SECTION
                        ? "a CDATA section" : "a tag"
                    throw engine.pointee.fail(
                        .notWellFormed, "input ended inside \(inside)", at: engine.pointee.currentPosition())
                }
                throw engine.pointee.expatFailure()
            }
        }
    }

    // MARK: Routing input

    private func withHandler(
        _ handler: (XMPPStreamEvent) -> Void, _ body: () throws(XMPPStreamError) -> Void
    ) throws(XMPPStreamError) {
        let result: Result<Void, XMPPStreamError> = withoutActuallyEscaping(handler) { handler in
            engine.pointee.eventHandler = handler
            defer { engine.pointee.eventHandler = nil }
            return Result { () throws(XMPPStreamError) in try body() }
        }
        try result.get()
    }

    /// Sends bytes to expat, first deciding from the prologue whether the input has a stream header or needs
    /// a synthetic one.
    private func route(_ bytes: UnsafeBufferPointer<UInt8>) throws(XMPPStreamError) {
        guard engine.pointee.prologue == nil else { return try parse(bytes, synthetic: false) }
        engine.pointee.prologueBytes.append(contentsOf: bytes)
        let buffered = engine.pointee.prologueBytes
        guard let decision = buffered.withUnsafeBufferPointer({ StreamPrologue.classify($0) }) else {
            let limit = configuration.limits.maxStanzaBytes
            if buffered.count > limit {
                throw engine.pointee.fail(
                    .policyViolation, "no complete start tag within the first \(limit) bytes",
                    at: SourcePosition(line: 1, column: 1, byteOffset: 0), limit: .stanzaBytes)
            }
            return
        }
        engine.pointee.prologue = decision
        engine.pointee.prologueBytes = []
        switch decision {
        case .explicit(let rootName):
            engine.pointee.rootName = rootName
            try parse(buffered, synthetic: false)
        case .unrecognised:
            try parse(buffered, synthetic: false)
        case .implicit(let offset):
            let header = Array(
                "<stream:stream xmlns='\(configuration.implicitContentNamespace)' xmlns:stream='\(XMPPNamespace.streams)'>"
                    .utf8)
            let prefix = buffered[..<offset]
            let line = 1 + prefix.lazy.filter { $0 == 0x0A }.count
            let lineStart = prefix.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
            // Columns count characters: skip UTF-8 continuation bytes and a byte order mark.
            let column = prefix[lineStart...].lazy.filter { $0 & 0xC0 != 0x80 && $0 != 0xEF }.count
            engine.pointee.rootName = Array("stream:stream".utf8)
            try parse(Array(prefix), synthetic: false)
            engine.pointee.syntheticHeader = (offset, header.count, line, column)
            try parse(header, synthetic: true)
            try parse(Array(buffered[offset...]), synthetic: false)
        }
    }

    private func parse(_ bytes: [UInt8], synthetic: Bool) throws(XMPPStreamError) {
        try bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(XMPPStreamError) in try parse(buffer, synthetic: synthetic) }
        }.get()
    }

    /// Hands bytes to expat in slices small enough that a stanza over the size limit is caught before expat has
    /// buffered more than one byte past the limit.
    private func parse(_ bytes: UnsafeBufferPointer<UInt8>, synthetic: Bool) throws(XMPPStreamError) {
        guard let base = bytes.baseAddress else { return }
        let limit = configuration.limits.maxStanzaBytes
        let expat = engine.pointee.expat
        var start = 0
        while start < bytes.count {
            var sliceLength = min(bytes.count - start, 1 << 20)
            if !synthetic {
                let windowStart =
                    engine.pointee.depth >= 2
                    ? engine.pointee.stanza.position.byteOffset : engine.pointee.boundaryOffset
                sliceLength = min(sliceLength, max(windowStart + limit + 1 - engine.pointee.bytesParsed, 1))
            }
            let pointer = UnsafeRawPointer(base + start).assumingMemoryBound(to: CChar.self)
            let status = XML_Parse(expat, pointer, Int32(sliceLength), 0)
            if !synthetic { engine.pointee.bytesParsed += sliceLength }
            if let error { throw error }
            if status != XML_STATUS_OK { throw engine.pointee.expatFailure() }
            start += sliceLength
            if !synthetic { try checkPendingSize() }
        }
    }

    /// Raises `policy-violation` when the bytes since the open stanza's start (or, between stanzas, since the
    /// last boundary) exceed the limit.
    private func checkPendingSize() throws(XMPPStreamError) {
        let limit = configuration.limits.maxStanzaBytes
        let depth = engine.pointee.depth
        let bytesParsed = engine.pointee.bytesParsed
        if depth >= 2 {
            if bytesParsed - engine.pointee.stanza.position.byteOffset > limit {
                let stanza = engine.pointee.stanza
                throw engine.pointee.fail(
                    .policyViolation, "stanza <\(stanza.localName(of: stanza.root))> exceeds \(limit) bytes",
                    at: stanza.position, limit: .stanzaBytes)
            }
        } else if bytesParsed - engine.pointee.boundaryOffset > limit {
            var position = engine.pointee.currentPosition()
            position.byteOffset = engine.pointee.boundaryOffset
            throw engine.pointee.fail(
                .policyViolation, "more than \(limit) bytes without a complete stanza (a tag or text too large)",
                at: position, limit: .stanzaBytes)
        }
    }

    // MARK: Callbacks

    private func installCallbacks() {
        let expat = engine.pointee.expat
        XML_SetUserData(expat, UnsafeMutableRawPointer(engine))
        XML_SetElementHandler(
            expat,
            { userData, name, attributes in
                let engine = XMPPStreamParser.engine(userData)
                guard let event = engine.pointee.startElement(name!, attributes!) else { return }
                XMPPStreamParser.deliver(event, from: engine)
            },
            { userData, _ in
                let engine = XMPPStreamParser.engine(userData)
                guard let event = engine.pointee.endElement() else { return }
                XMPPStreamParser.deliver(event, from: engine)
            })
        XML_SetCharacterDataHandler(expat) { userData, text, length in
            XMPPStreamParser.engine(userData).pointee.characterData(text!, Int(length))
        }
        XML_SetStartNamespaceDeclHandler(expat) { userData, prefix, uri in
            XMPPStreamParser.engine(userData).pointee.namespaceDeclaration(prefix: prefix, uri: uri)
        }
        XML_SetXmlDeclHandler(expat) { userData, _, encoding, _ in
            XMPPStreamParser.engine(userData).pointee.xmlDeclaration(encoding: encoding)
        }
        XML_SetStartDoctypeDeclHandler(expat) { userData, _, _, _, _ in
            XMPPStreamParser.engine(userData).pointee.abort(
                .restrictedXML, "a DOCTYPE (document type declaration) is not allowed")
        }
        XML_SetEntityDeclHandler(expat) { userData, _, _, _, _, _, _, _, _ in
            XMPPStreamParser.engine(userData).pointee.abort(.restrictedXML, "entity declarations are not allowed")
        }
        XML_SetCommentHandler(expat) { userData, _ in
            XMPPStreamParser.engine(userData).pointee.abort(.restrictedXML, "comments are not allowed")
        }
        XML_SetProcessingInstructionHandler(expat) { userData, _, _ in
            XMPPStreamParser.engine(userData).pointee.abort(.restrictedXML, "processing instructions are not allowed")
        }
        XML_SetSkippedEntityHandler(expat) { userData, _, _ in
            XMPPStreamParser.engine(userData).pointee.abort(.restrictedXML, "entity references are not allowed")
        }
        XML_SetParamEntityParsing(expat, XML_PARAM_ENTITY_PARSING_NEVER)
    }

    private static func engine(_ userData: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<StreamEngine> {
        userData!.assumingMemoryBound(to: StreamEngine.self)
    }

    /// Calls the receiver's handler outside of any access to the engine.
    private static func deliver(_ event: XMPPStreamEvent, from engine: UnsafeMutablePointer<StreamEngine>) {
        let handler = engine.pointee.eventHandler
        handler?(event)
    }
}
