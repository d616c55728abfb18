/// Decides, from the first bytes of an input, whether it opens with a `<stream:stream>` header or is a
/// headerless sequence of stanzas that the parser must wrap in an implicit stream.
///
/// XML allows one root element, so a file of bare stanzas is only parseable inside a synthetic root; the
/// synthetic header goes after the XML declaration, where a real header would have been.
enum StreamPrologue: Equatable {
    /// The input starts with an element whose local name is `stream`; `rootName` is its qualified name as
    /// written (for example `stream:stream`), so that the parser can close it if the input just stops.
    case explicit(rootName: [UInt8])
    /// The input does not start with an element at all (garbage, a comment, a DOCTYPE): feed it as it is and
    /// let the XML parser report the problem.
    case unrecognised
    /// The input starts with some other element: insert a synthetic header at byte `insertionOffset`.
    case implicit(insertionOffset: Int)

    /// Classifies the prologue, or returns nil when more bytes are needed to tell.
    static func classify(_ bytes: UnsafeBufferPointer<UInt8>) -> StreamPrologue? {
        var index = 0
        let count = bytes.count
        // UTF-8 byte order mark.
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        while index < min(3, count), bytes[index] == bom[index] { index += 1 }
        if index > 0 && index < 3 { return index == count ? nil : .unrecognised }
        skipWhitespace(bytes, &index)
        guard index < count else { return nil }
        guard bytes[index] == UInt8(ascii: "<") else { return .unrecognised }
        guard index + 1 < count else { return nil }
        if bytes[index + 1] == UInt8(ascii: "?") {
            // `<?xml` followed by whitespace is the XML declaration; any other `<?` is a processing instruction.
            let declaration = Array("<?xml".utf8)
            for offset in 0 ..< declaration.count {
                guard index + offset < count else { return nil }
                guard bytes[index + offset] == declaration[offset] else { return .unrecognised }
            }
            guard index + declaration.count < count else { return nil }
            guard isWhitespace(bytes[index + declaration.count]) else { return .unrecognised }
            var end = index + declaration.count
            while true {
                guard end + 1 < count else { return nil }
                if bytes[end] == UInt8(ascii: "?") && bytes[end + 1] == UInt8(ascii: ">") { break }
                end += 1
            }
            index = end + 2
            skipWhitespace(bytes, &index)
            guard index < count else { return nil }
            guard bytes[index] == UInt8(ascii: "<") else { return .unrecognised }
            guard index + 1 < count else { return nil }
        }
        if bytes[index + 1] == UInt8(ascii: "!") || bytes[index + 1] == UInt8(ascii: "?") { return .unrecognised }
        let nameStart = index + 1
        var nameEnd = nameStart
        while nameEnd < count {
            let byte = bytes[nameEnd]
            if isWhitespace(byte) || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "/") { break }
            nameEnd += 1
        }
        guard nameEnd < count else { return nil }
        let name = Array(bytes[nameStart ..< nameEnd])
        let localName = name.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false).last ?? []
        if localName.elementsEqual("stream".utf8) { return .explicit(rootName: name) }
        return .implicit(insertionOffset: index)
    }

    /// Whether the bytes hold nothing but a byte order mark and whitespace: an empty stream, not an error.
    static func isBlank(_ bytes: [UInt8]) -> Bool {
        var rest = bytes[...]
        if rest.starts(with: [0xEF, 0xBB, 0xBF]) { rest = rest.dropFirst(3) }
        return rest.allSatisfy(isWhitespace)
    }

    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private static func skipWhitespace(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) {
        while index < bytes.count, isWhitespace(bytes[index]) { index += 1 }
    }
}
