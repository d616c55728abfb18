#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Text files of `/proc` and `/sys`, read whole. The kernel reports their size as 0 and makes them a page per
/// read, so they are read line by line to the end (`String(contentsOfFile:)` returns the first page only, which
/// for `/proc/net/tcp` on a busy host is a small part of it).
package enum ProcFile {
    /// The file's lines without their newlines, or nil where it cannot be opened.
    package static func lines(_ path: String) -> [String]? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var lines: [String] = []
        var buffer = [CChar](repeating: 0, count: 1024)
        while fgets(&buffer, Int32(buffer.count), file) != nil {
            var line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            while line.last == "\n" { line.removeLast() }
            lines.append(line)
        }
        return lines
    }
}
