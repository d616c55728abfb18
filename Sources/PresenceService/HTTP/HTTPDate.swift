#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The `Date` header's value, formatted once per second (RFC 9110 §5.6.7: `Sun, 06 Nov 1994 08:49:37 GMT`): the
/// router's answers get theirs from Hummingbird's own cache, which is internal to it.
struct HTTPDate {
    private var second: time_t = -1
    private var text = ""

    mutating func now() -> String {
        var current = time(nil)
        guard current != second else { return text }
        second = current
        var parts = tm()
        gmtime_r(&current, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        text =
            "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
        return text
    }
}
