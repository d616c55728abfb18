/// Hexadecimal digits, for percent-escapes in request targets, the hex digest of a component handshake and the size
/// lines of a chunked body.
public enum HexDigit {
    /// The lower-case digit (`0`–`9`, `a`–`f`) for `value`, which is below 16.
    public static func lowercase(_ value: Int) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + UInt8(value) : UInt8(ascii: "a") + UInt8(value - 10)
    }

    /// The value of `byte` as a hexadecimal digit in either case (`0`–`9`, `a`–`f`, `A`–`F`), nil for any other
    /// byte.
    public static func value(of byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0") ... UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a") ... UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A") ... UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
