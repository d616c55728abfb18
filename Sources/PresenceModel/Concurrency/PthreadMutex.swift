#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A plain `pthread_mutex_t` (no priority inheritance) at a fixed address, the lock under ``Locked``.
///
/// Chosen by measurement on this toolchain (Documentation/Benchmarks.md, storages): `Synchronization.Mutex` uses a
/// priority-inheritance futex that collapses under contention (swiftlang/swift#88440), while a plain pthread
/// mutex holds up. Debug builds make it error-checking, so a relock or an unlock from the wrong thread stops
/// the program instead of deadlocking it; every call's result is checked.
@usableFromInline
struct PthreadMutex: ~Copyable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        defer { pthread_mutexattr_destroy(&attributes) }
        #if DEBUG
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        #endif
        let result = pthread_mutex_init(mutex, &attributes)
        precondition(result == 0, "pthread_mutex_init failed: \(result)")
    }

    deinit {
        let result = pthread_mutex_destroy(mutex)
        precondition(result == 0, "pthread_mutex_destroy failed: \(result)")
        mutex.deallocate()
    }

    @inlinable @inline(__always)
    func lock() {
        let result = pthread_mutex_lock(mutex)
        precondition(result == 0, "pthread_mutex_lock failed: \(result)")
    }

    @inlinable @inline(__always)
    func unlock() {
        let result = pthread_mutex_unlock(mutex)
        precondition(result == 0, "pthread_mutex_unlock failed: \(result)")
    }
}
