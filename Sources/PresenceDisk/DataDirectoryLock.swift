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
        guard Self.lock(descriptor) else {
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

    /// Takes the lock; false when another holder keeps it.
    ///
    /// A lock this process released can still be held for an instant: a child being started by another thread
    /// (`fork` then `exec`) holds a copy of every descriptor until its `exec` closes it, and an `flock` belongs to
    /// the open file, so the copy keeps it. When the file names this process as the holder, the lock is tried
    /// again for up to a second before the directory is called in use.
    private static func lock(_ descriptor: Int32) -> Bool {
        let deadline = ContinuousClock.now + .seconds(1)
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard pid(in: descriptor) == getpid(), ContinuousClock.now < deadline else { return false }
            usleep(10_000)
        }
        return true
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
