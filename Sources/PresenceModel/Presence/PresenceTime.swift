#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A point in time with millisecond precision, as XMPP timestamps (XEP-0082) carry it.
///
/// Eight bytes instead of Foundation's `Date` plus formatter: presence updates are stored by the million.
public struct PresenceTime: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var millisecondsSinceEpoch: Int64

    public init(millisecondsSinceEpoch: Int64) { self.millisecondsSinceEpoch = millisecondsSinceEpoch }

    public init(secondsSinceEpoch: Int64) { millisecondsSinceEpoch = secondsSinceEpoch * 1000 }

    /// The current wall-clock time.
    public static func now() -> PresenceTime {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return PresenceTime(millisecondsSinceEpoch: Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000)
    }

    public static func < (lhs: PresenceTime, rhs: PresenceTime) -> Bool {
        lhs.millisecondsSinceEpoch < rhs.millisecondsSinceEpoch
    }

    /// XEP-0082 DateTime in UTC, `2026-11-22T09:15:00Z` (with `.mmm` when there are milliseconds).
    public var description: String {
        // Every answer the query API writes carries one: digits into one buffer, no intermediate strings.
        let text = String(unsafeUninitializedCapacity: PresenceTime.maximumFourDigitYearLength) { output in
            writeFourDigitYearDescription(into: output) ?? 0
        }
        return text.isEmpty ? extendedYearDescription : text
    }

    /// Calls `body` with ``description``'s UTF-8 bytes, without making a `String` for the usual four-digit year.
    public func withUTF8Description<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: PresenceTime.maximumFourDigitYearLength) { output in
            guard let count = writeFourDigitYearDescription(into: output) else {
                var text = extendedYearDescription
                return text.withUTF8 { body(UnsafeRawBufferPointer($0)) }
            }
            return body(UnsafeRawBufferPointer(start: output.baseAddress, count: count))
        }
    }

    /// `CCYY-MM-DDThh:mm:ss.sssZ`.
    private static let maximumFourDigitYearLength = 24

    private var parts: (year: Int, month: Int, day: Int, secondOfDay: Int, milliseconds: Int) {
        let milliseconds = Int(((millisecondsSinceEpoch % 1000) + 1000) % 1000)
        let seconds = (millisecondsSinceEpoch - Int64(milliseconds)) / 1000
        let days = Int(seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400)
        let secondOfDay = Int(seconds - Int64(days) * 86_400)
        let (year, month, day) = PresenceTime.civilDate(daysSinceEpoch: days)
        return (year, month, day, secondOfDay, milliseconds)
    }

    /// The description of a time whose year is outside 0…9999 (XEP-0082 allows more digits and a sign).
    private var extendedYearDescription: String {
        let (year, month, day, secondOfDay, milliseconds) = parts
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        var text =
            "\(year)-\(two(month))-\(two(day))T\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60))"
        if milliseconds != 0 { text += "." + String(String(milliseconds + 1000).dropFirst()) }
        return text + "Z"
    }

    /// Writes the description into `output` (room for ``maximumFourDigitYearLength`` bytes) and returns its length;
    /// nil, writing nothing, when the year is outside 0…9999.
    private func writeFourDigitYearDescription(into output: UnsafeMutableBufferPointer<UInt8>) -> Int? {
        let (year, month, day, secondOfDay, milliseconds) = parts
        guard (0 ... 9999).contains(year) else { return nil }
        var index = 0
        func digits(_ value: Int, _ count: Int) {
            var value = value
            for position in stride(from: count - 1, through: 0, by: -1) {
                output[index + position] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            }
            index += count
        }
        func character(_ byte: Unicode.Scalar) {
            output[index] = UInt8(byte.value)
            index += 1
        }
        digits(year, 4)
        character("-")
        digits(month, 2)
        character("-")
        digits(day, 2)
        character("T")
        digits(secondOfDay / 3600, 2)
        character(":")
        digits(secondOfDay / 60 % 60, 2)
        character(":")
        digits(secondOfDay % 60, 2)
        if milliseconds != 0 {
            character(".")
            digits(milliseconds, 3)
        }
        character("Z")
        return index
    }

    /// Parses an XEP-0082 DateTime (`CCYY-MM-DDThh:mm:ss[.sss][Z|±hh:mm]`) or the legacy XEP-0091 form
    /// (`CCYYMMDDThh:mm:ss`, UTC). Returns nil for anything else.
    public init?(xmppTimestamp bytes: UnsafeBufferPointer<UInt8>) {
        var reader = DigitReader(bytes: bytes)
        guard let year = reader.number(digits: 4) else { return nil }
        let legacy = !reader.skip(UInt8(ascii: "-"))
        guard let month = reader.number(digits: 2), legacy || reader.skip(UInt8(ascii: "-")),
            let day = reader.number(digits: 2), reader.skip(UInt8(ascii: "T")),
            let hour = reader.number(digits: 2), reader.skip(UInt8(ascii: ":")),
            let minute = reader.number(digits: 2), reader.skip(UInt8(ascii: ":")),
            let second = reader.number(digits: 2)
        else { return nil }
        guard (1 ... 12).contains(month), (1 ... 31).contains(day), hour < 24, minute < 60, second < 61 else {
            return nil
        }
        var milliseconds = 0
        if reader.skip(UInt8(ascii: ".")) {
            var scale = 100
            var sawDigit = false
            while let digit = reader.digit() {
                milliseconds += digit * scale
                scale /= 10
                sawDigit = true
            }
            guard sawDigit else { return nil }
        }
        var offsetMinutes = 0
        if reader.skip(UInt8(ascii: "Z")) {
        } else if let sign = reader.sign() {
            guard let hours = reader.number(digits: 2), reader.skip(UInt8(ascii: ":")),
                let minutes = reader.number(digits: 2), hours < 24, minutes < 60
            else { return nil }
            offsetMinutes = sign * (hours * 60 + minutes)
        } else if !legacy {
            return nil
        }
        guard reader.atEnd else { return nil }
        let days = PresenceTime.daysSinceEpoch(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second - offsetMinutes * 60)
        millisecondsSinceEpoch = seconds * 1000 + Int64(milliseconds)
    }

    /// Parses an XEP-0082 DateTime from a string.
    public init?(xmppTimestamp string: String) {
        var string = string
        guard let parsed = string.withUTF8({ PresenceTime(xmppTimestamp: $0) }) else { return nil }
        self = parsed
    }

    // Howard Hinnant's days-from-civil algorithms, exact for the proleptic Gregorian calendar.
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civilDate(daysSinceEpoch days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

private struct DigitReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    var atEnd: Bool { index == bytes.count }

    mutating func digit() -> Int? {
        guard index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") else {
            return nil
        }
        defer { index += 1 }
        return Int(bytes[index] - UInt8(ascii: "0"))
    }

    mutating func number(digits: Int) -> Int? {
        var value = 0
        for _ in 0 ..< digits {
            guard let digit = digit() else { return nil }
            value = value * 10 + digit
        }
        return value
    }

    mutating func skip(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    mutating func sign() -> Int? {
        if skip(UInt8(ascii: "+")) { return 1 }
        if skip(UInt8(ascii: "-")) { return -1 }
        return nil
    }
}
