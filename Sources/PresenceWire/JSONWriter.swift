/// Writes JSON text straight into bytes: the one encoder behind every document of the wire format.
///
/// Foundation's `JSONEncoder` was most of a query's cost in the service (it boxes every value and sorts keys on
/// each call); this writer appends bytes with no intermediate values. Documents write their keys in sorted
/// order, so the text is the same as `JSONEncoder` with `.sortedKeys` writes. `pretty` indents by two spaces for
/// people reading a terminal; scripts get the same document either way.
public struct JSONWriter: ~Copyable {
    /// The text written so far, in memory the writer owns: every value makes room once and then stores its bytes
    /// without the per-byte uniqueness and capacity checks of `Array.append` (those were a third of a 1,000-JID
    /// batch's JSON time; Documentation/Benchmarks.md).
    private var storage: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    public private(set) var count = 0
    public let pretty: Bool
    private var depth = 0
    /// Bit `depth` is set while the container at that depth has no element yet (containers nest at most 64 deep).
    private var empty: UInt64 = 0

    public init(pretty: Bool = false, reservingCapacity capacity: Int = 256) {
        self.pretty = pretty
        self.capacity = max(capacity, 16)
        storage = .allocate(capacity: self.capacity)
    }

    deinit { storage.deallocate() }

    /// A copy of the text written so far.
    public var bytes: [UInt8] { Array(UnsafeBufferPointer(start: storage, count: count)) }

    /// Calls `body` with the text written so far, without copying it.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: storage, count: count))
    }

    /// Starts a new document in the same memory (a connection writing one answer after another).
    public mutating func removeAll() {
        count = 0
        depth = 0
        empty = 0
    }

    /// The memory the writer holds, in bytes.
    public var reservedCapacity: Int { capacity }

    /// Makes room for `extra` more bytes.
    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(to: count + extra) }
    }

    private mutating func grow(to needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newStorage = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newStorage.update(from: storage, count: count)
        storage.deallocate()
        storage = newStorage
        capacity = newCapacity
    }

    /// Appends one byte; room must have been reserved.
    @inline(__always)
    private mutating func put(_ byte: UInt8) {
        storage[count] = byte
        count += 1
    }

    /// Appends bytes; room must have been reserved.
    @inline(__always)
    private mutating func put(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        UnsafeMutableRawPointer(storage + count).copyMemory(from: base, byteCount: bytes.count)
        count += bytes.count
    }

    private mutating func append(_ text: StaticString) {
        reserve(text.utf8CodeUnitCount)
        put(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    // MARK: Containers

    public mutating func object(_ body: (inout JSONWriter) -> Void) {
        open(UInt8(ascii: "{"))
        body(&self)
        close(UInt8(ascii: "}"))
    }

    public mutating func array<S: Sequence>(_ elements: S, _ body: (inout JSONWriter, S.Element) -> Void) {
        open(UInt8(ascii: "["))
        for element in elements {
            separate()
            body(&self, element)
        }
        close(UInt8(ascii: "]"))
    }

    /// An array whose elements `body` writes one by one, each through ``element(_:)``: for elements that come from
    /// a callback rather than a sequence.
    public mutating func array(writingElements body: (inout JSONWriter) -> Void) {
        open(UInt8(ascii: "["))
        body(&self)
        close(UInt8(ascii: "]"))
    }

    /// One element of an array started by ``array(writingElements:)``.
    public mutating func element(_ body: (inout JSONWriter) -> Void) {
        separate()
        body(&self)
    }

    /// Starts a member of the current object; write its value next.
    public mutating func key(_ name: StaticString) {
        separate()
        reserve(name.utf8CodeUnitCount + 4)
        put(UInt8(ascii: "\""))
        put(UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        put(UInt8(ascii: "\""))
        put(UInt8(ascii: ":"))
        if pretty { put(UInt8(ascii: " ")) }
    }

    /// Starts a member whose name is not known at compile time (a map's keys).
    ///
    /// A separate label from ``key(_:)``: with one name, a string literal would pick this overload (`String` is the
    /// default literal type) and every member name would be scanned for escapes (10% of a batch query's profile).
    public mutating func key(named name: String) {
        separate()
        appendEscaped(name)
        reserve(2)
        put(UInt8(ascii: ":"))
        if pretty { put(UInt8(ascii: " ")) }
    }

    // MARK: Values

    public mutating func string(_ value: String?) {
        guard let value else { return null() }
        appendEscaped(value)
    }

    /// A string given as its UTF-8 bytes, which must be valid UTF-8 (text the caller validated or wrote).
    public mutating func string(utf8 value: UnsafeRawBufferPointer) {
        appendEscaped(value)
    }

    public mutating func int(_ value: Int?) {
        guard let value else { return null() }
        guard value >= 0 else { return appendText(String(value)) }
        // Digits straight into the bytes, most significant first: no intermediate string.
        var divisor = 1
        var digits = 1
        while divisor <= value / 10 {
            divisor *= 10
            digits += 1
        }
        reserve(digits)
        var rest = value
        while divisor > 0 {
            put(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    public mutating func double(_ value: Double?) {
        guard let value, value.isFinite else { return null() }
        appendText(value.description)
    }

    public mutating func bool(_ value: Bool) {
        append(value ? "true" : "false")
    }

    public mutating func null() {
        append("null")
    }

    /// A map with string keys, written in sorted key order.
    public mutating func counts(_ counts: [String: Int]) {
        object { writer in
            for (name, count) in counts.sorted(by: { $0.key < $1.key }) {
                writer.key(named: name)
                writer.int(count)
            }
        }
    }

    public mutating func strings(_ values: [String]) {
        array(values) { writer, value in writer.string(value) }
    }

    // MARK: Layout

    private mutating func open(_ bracket: UInt8) {
        reserve(1)
        put(bracket)
        depth += 1
        empty |= 1 << UInt64(depth & 63)
    }

    private mutating func close(_ bracket: UInt8) {
        let wasEmpty = empty & (1 << UInt64(depth & 63)) != 0
        depth -= 1
        if pretty && !wasEmpty { newline() }
        reserve(1)
        put(bracket)
    }

    /// Before an array element or an object member: a comma unless it is the first, then a new line.
    private mutating func separate() {
        let bit: UInt64 = 1 << UInt64(depth & 63)
        if empty & bit != 0 {
            empty &= ~bit
        } else {
            reserve(1)
            put(UInt8(ascii: ","))
        }
        if pretty { newline() }
    }

    private mutating func newline() {
        reserve(1 + 2 * depth)
        put(UInt8(ascii: "\n"))
        for _ in 0 ..< 2 * depth { put(UInt8(ascii: " ")) }
    }

    /// Text that needs no escaping (numbers).
    private mutating func appendText(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            reserve(utf8.count)
            put(UnsafeRawBufferPointer(utf8))
        }
    }

    /// A JSON string literal, escaped as RFC 8259 requires.
    private mutating func appendEscaped(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in appendEscaped(UnsafeRawBufferPointer(utf8)) }
    }

    private mutating func appendEscaped(_ utf8: UnsafeRawBufferPointer) {
        // Nearly every string (JIDs, states, statuses) needs no escape: one scan of contiguous bytes, then one copy.
        // Iterating `String.UTF8View` instead was 12% of a batch query's profile.
        reserve(utf8.count + 2)
        put(UInt8(ascii: "\""))
        if JSONWriter.needsEscaping(utf8) {
            for byte in utf8 { appendEscaped(byte) }
            reserve(1)
        } else {
            put(utf8)
        }
        put(UInt8(ascii: "\""))
    }

    /// Whether every byte is ASCII (eight at a time), so that the bytes are valid UTF-8 without further checks.
    public static func isASCII(_ utf8: UnsafeRawBufferPointer) -> Bool {
        guard let base = utf8.baseAddress else { return true }
        var index = 0
        var high: UInt64 = 0
        while index + 8 <= utf8.count {
            high |= base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < utf8.count {
            high |= UInt64(utf8[index])
            index += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }

    /// Whether any byte is a control character, `"` or `\`: eight bytes per step (SWAR), since every string of
    /// every answer is scanned (a byte at a time, the scan was 7% of a batch query's profile).
    static func needsEscaping(_ utf8: UnsafeRawBufferPointer) -> Bool {
        guard let base = utf8.baseAddress else { return false }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        /// The high bit of each byte that is zero in `word` (exact: no false positives across bytes).
        func zeroBytes(_ word: UInt64) -> UInt64 { ~(((word & ~highs) &+ ~highs) | word) & highs }
        var index = 0
        while index + 8 <= utf8.count {
            let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            // Bytes below 0x20: the high three bits all clear.
            let control = zeroBytes(word & (0xE0 * ones))
            let quote = zeroBytes(word ^ (UInt64(UInt8(ascii: "\"")) * ones))
            let backslash = zeroBytes(word ^ (UInt64(UInt8(ascii: "\\")) * ones))
            if control | quote | backslash != 0 { return true }
            index += 8
        }
        while index < utf8.count {
            let byte = utf8[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return true }
            index += 1
        }
        return false
    }

    /// One byte of a string, escaped if it must be (at most six bytes: `\u001f`).
    private mutating func appendEscaped(_ byte: UInt8) {
        reserve(6)
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"):
            put(UInt8(ascii: "\\"))
            put(byte)
        case 0x0A:
            put(UInt8(ascii: "\\"))
            put(UInt8(ascii: "n"))
        case 0x0D:
            put(UInt8(ascii: "\\"))
            put(UInt8(ascii: "r"))
        case 0x09:
            put(UInt8(ascii: "\\"))
            put(UInt8(ascii: "t"))
        case 0 ..< 0x20:
            put(UnsafeRawBufferPointer(start: ("\\u00" as StaticString).utf8Start, count: 4))
            put(HexDigit.lowercase(Int(byte >> 4)))
            put(HexDigit.lowercase(Int(byte & 0xF)))
        default:
            put(byte)
        }
    }
}

/// A document of the wire format: it writes itself, and only this way.
public protocol JSONDocument {
    func write(to writer: inout JSONWriter)
    /// About how many bytes the compact text takes, reserved up front so that a large document (a batch of a
    /// thousand answers is about 290 KB) is not copied again each time the buffer doubles.
    var estimatedJSONSize: Int { get }
}

extension JSONDocument {
    public var estimatedJSONSize: Int { 256 }

    /// The document as JSON text.
    public func jsonBytes(pretty: Bool = false) -> [UInt8] {
        var writer = JSONWriter(pretty: pretty, reservingCapacity: estimatedJSONSize * (pretty ? 2 : 1))
        write(to: &writer)
        return writer.bytes
    }
}
