/// Writes JSON text straight into bytes: the one encoder behind every document of the wire format.
///
/// Foundation's `JSONEncoder` was most of a query's cost in the service (it boxes every value and sorts keys on
/// each call); this writer appends bytes with no intermediate values. Documents write their keys in sorted
/// order, so the text is the same as `JSONEncoder` with `.sortedKeys` writes. `pretty` indents by two spaces for
/// people reading a terminal; scripts get the same document either way.
public struct JSONWriter {
    public private(set) var bytes: [UInt8] = []
    public let pretty: Bool
    private var depth = 0
    /// Bit `depth` is set while the container at that depth has no element yet (containers nest at most 64 deep).
    private var empty: UInt64 = 0

    public init(pretty: Bool = false, reservingCapacity capacity: Int = 256) {
        self.pretty = pretty
        bytes.reserveCapacity(capacity)
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

    /// Starts a member of the current object; write its value next.
    public mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        if pretty { bytes.append(UInt8(ascii: " ")) }
    }

    /// Starts a member whose name is not known at compile time (a map's keys).
    ///
    /// A separate label from ``key(_:)``: with one name, a string literal would pick this overload (`String` is the
    /// default literal type) and every member name would be scanned for escapes (10% of a batch query's profile).
    public mutating func key(named name: String) {
        separate()
        appendEscaped(name)
        bytes.append(UInt8(ascii: ":"))
        if pretty { bytes.append(UInt8(ascii: " ")) }
    }

    // MARK: Values

    public mutating func string(_ value: String?) {
        guard let value else { return null() }
        appendEscaped(value)
    }

    public mutating func int(_ value: Int?) {
        guard let value else { return null() }
        guard value >= 0 else { return bytes.append(contentsOf: String(value).utf8) }
        // Digits straight into the bytes, most significant first: no intermediate string.
        var divisor = 1
        while divisor <= value / 10 { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    public mutating func double(_ value: Double?) {
        guard let value, value.isFinite else { return null() }
        bytes.append(contentsOf: value.description.utf8)
    }

    public mutating func bool(_ value: Bool) {
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    public mutating func null() {
        bytes.append(contentsOf: "null".utf8)
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
        bytes.append(bracket)
        depth += 1
        empty |= 1 << UInt64(depth & 63)
    }

    private mutating func close(_ bracket: UInt8) {
        let wasEmpty = empty & (1 << UInt64(depth & 63)) != 0
        depth -= 1
        if pretty && !wasEmpty { newline() }
        bytes.append(bracket)
    }

    /// Before an array element or an object member: a comma unless it is the first, then a new line.
    private mutating func separate() {
        let bit: UInt64 = 1 << UInt64(depth & 63)
        if empty & bit != 0 { empty &= ~bit } else { bytes.append(UInt8(ascii: ",")) }
        if pretty { newline() }
    }

    private mutating func newline() {
        bytes.append(UInt8(ascii: "\n"))
        for _ in 0 ..< depth { bytes.append(contentsOf: [UInt8(ascii: " "), UInt8(ascii: " ")]) }
    }

    /// A JSON string literal, escaped as RFC 8259 requires.
    private mutating func appendEscaped(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            // Nearly every string (JIDs, states, statuses) needs no escape: one scan of contiguous bytes, then one
            // copy. Iterating `String.UTF8View` instead was 12% of a batch query's profile.
            guard utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
                bytes.append(contentsOf: utf8)
                return
            }
            for byte in utf8 { appendEscaped(byte) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func appendEscaped(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
        case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
        case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
        case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
        case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
        case 0 ..< 0x20:
            let hex: StaticString = "0123456789abcdef"
            bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
            bytes.append(hex.utf8Start[Int(byte >> 4)])
            bytes.append(hex.utf8Start[Int(byte & 0xF)])
        default: bytes.append(byte)
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
