import Foundation

/// Where a stream comes from: a file, or standard input (`-`), read in chunks as the bytes arrive so that each
/// stanza is applied as soon as it is complete, also from a slow pipe.
struct InputSource {
    let path: String

    var isStandardInput: Bool { path == "-" }

    struct CannotOpen: Error, CustomStringConvertible {
        let path: String
        let reason: String
        var description: String { "cannot open \(path): \(reason)" }
    }

    static let chunkSize = 64 * 1024

    /// Calls `body` with every chunk read, in order, until the end of the input or until `body` returns false.
    func read(_ body: (UnsafeRawBufferPointer) -> Bool) throws {
        let descriptor = isStandardInput ? STDIN_FILENO : open(path, O_RDONLY)
        guard descriptor >= 0 else { throw CannotOpen(path: path, reason: String(cString: strerror(errno))) }
        defer { if !isStandardInput { close(descriptor) } }
        var status = stat()
        if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            throw CannotOpen(path: path, reason: "is a directory")
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: InputSource.chunkSize, alignment: 1)
        defer { buffer.deallocate() }
        while true {
            let count = Foundation.read(descriptor, buffer.baseAddress, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw CannotOpen(path: path, reason: String(cString: strerror(errno)))
            }
            if count == 0 { return }
            guard body(UnsafeRawBufferPointer(rebasing: buffer[..<count])) else { return }
        }
    }

    /// Checks that the input can be opened, before any work starts (exit code 66 otherwise).
    func checkReadable() throws {
        guard !isStandardInput else { return }
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw CannotOpen(path: path, reason: String(cString: strerror(errno))) }
        close(descriptor)
    }
}
