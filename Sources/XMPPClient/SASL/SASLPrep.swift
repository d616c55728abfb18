import Foundation

/// SASLprep (RFC 4013), the stringprep profile SCRAM applies to usernames and passwords, so that a password typed
/// with a different but equivalent Unicode spelling still logs in: non-ASCII spaces become spaces, characters
/// "commonly mapped to nothing" go, the rest is normalised (NFKC), and control, private-use, non-character and
/// display-changing characters are refused. The bidirectional-text check (RFC 3454 §6) is not made: it only
/// refuses more strings, and a server that makes it answers `not-authorized` for them.
enum SASLPrep {
    static func prepare(_ text: String, what: String) throws(SCRAMError) -> String {
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
            guard !text.isEmpty || what == "username" else { throw .prohibitedCharacter(what: what) }
            return text  // printable ASCII is its own SASLprep
        }
        var mapped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if mapsToNothing(scalar.value) { continue }
            mapped.append(isNonASCIISpace(scalar.value) ? " " : scalar)
        }
        let normalized = String(mapped).precomposedStringWithCompatibilityMapping
        for scalar in normalized.unicodeScalars where isProhibited(scalar.value) {
            throw .prohibitedCharacter(what: what)
        }
        return normalized
    }

    /// RFC 3454 table B.1.
    private static func mapsToNothing(_ value: UInt32) -> Bool {
        switch value {
        case 0x00AD, 0x034F, 0x1806, 0x180B ... 0x180D, 0x200B ... 0x200D, 0x2060, 0xFE00 ... 0xFE0F, 0xFEFF: true
        default: false
        }
    }

    /// RFC 3454 table C.1.2.
    private static func isNonASCIISpace(_ value: UInt32) -> Bool {
        switch value {
        case 0x00A0, 0x1680, 0x2000 ... 0x200B, 0x202F, 0x205F, 0x3000: true
        default: false
        }
    }

    /// RFC 3454 tables C.2.1 to C.9, as RFC 4013 §2.3 lists them.
    private static func isProhibited(_ value: UInt32) -> Bool {
        switch value {
        case 0x0000 ... 0x001F, 0x007F: true  // ASCII control
        case 0x0080 ... 0x009F, 0x06DD, 0x070F, 0x180E, 0x200C, 0x200D, 0x2028, 0x2029, 0x2060 ... 0x2063,
            0x206A ... 0x206F, 0xFEFF, 0xFFF9 ... 0xFFFC, 0x1D173 ... 0x1D17A:
            true  // non-ASCII control
        case 0xE000 ... 0xF8FF, 0xF0000 ... 0xFFFFD, 0x100000 ... 0x10FFFD: true  // private use
        case 0xFDD0 ... 0xFDEF: true  // non-characters
        case _ where value & 0xFFFE == 0xFFFE: true  // non-characters at the end of every plane
        case 0xFFFD: true  // inappropriate for plain text
        case 0x2FF0 ... 0x2FFB: true  // ideographic description
        case 0x0340, 0x0341, 0x200E, 0x200F, 0x202A ... 0x202E: true  // change display properties
        case 0xE0001, 0xE0020 ... 0xE007F: true  // tagging
        default: false
        }
    }
}
