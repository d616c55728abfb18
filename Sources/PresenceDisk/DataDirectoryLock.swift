import Glibc

/// The exclusive hold of one process on a data directory: an `flock` on `presence.lock` in it, with the holder's
/// pid written inside for the message a second process gets. The kernel releases it when the process ends, kill
/// -9 included, so a crash never leaves the directory locked.
final class DataDirectoryLock {
    let directory: String
    private var descriptor: Int32

    init(directory: String) throws(DiskTierError) {
        self.directory = directory
        let path = directory + "/presence.lock"
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .notWritable(path: path, reason: String(cString: strerror(errno))) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let holder = Self.pid(in: descriptor)
            Glibc.close(descriptor)
            throw .inUse(directory: directory, pid: holder)
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
    }

    deinit { release() }

    func release() {
        guard descriptor >= 0 else { return }
        Glibc.close(descriptor)
        descriptor = -1
    }

    private static func pid(in descriptor: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int32(String(decoding: buffer[..<count], as: UTF8.self).trimmingWhitespace)
    }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        String(self.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
