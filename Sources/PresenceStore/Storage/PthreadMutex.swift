#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A plain `pthread_mutex_t` (no priority inheritance), the lock the storages use.
///
/// Chosen by measurement on this toolchain (see the README's lock table): `Synchronization.Mutex` uses a
/// priority-inheritance futex that collapses under contention (swiftlang/swift#88440), while a plain pthread
/// mutex holds up. The mutex lives in its own allocation so its address never moves.
public final class PthreadMutex: @unchecked Sendable {
    // @unchecked: the only stored property is a pointer to a pthread mutex, which exists to be shared across
    // threads; it is initialised in init, destroyed in deinit, and only touched through pthread calls.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inline(__always)
    public func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
