/// A value only reachable while its lock is held: the one lock idiom of this package (as SwiftNIO's
/// `NIOLockedValueBox`), on a plain ``PthreadMutex``.
///
/// Use it instead of a class with a mutex, a `var` and `@unchecked Sendable`: the state is then only reachable
/// through ``withLock(_:)``, and nobody can forget to take the lock.
///
/// The value may be a non-Sendable class that exists only to be guarded (a storage's table): its owner never
/// returns it or anything that points into it from a `withLock` body. That rule is why this type is `package`,
/// not public: every owner is in this package, and each returns only Sendable values from its bodies.
package final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only read or written inside `withLock`, while `mutex` is held, and the owners in this
    // package never let a reference into a non-Sendable value escape a body (see the type's documentation). It
    // cannot be `sending`-checked like `Synchronization.Mutex`: the storages pass their table to a generic
    // non-Sendable closure under the lock, which region isolation refuses for `inout sending`.
    @usableFromInline let mutex = PthreadMutex()
    /// The value lives in its own allocation: reaching it through a pointer costs no dynamic exclusivity check,
    /// which a class's stored `var` passed `inout` would pay on every lock (measured on the ingest path).
    @usableFromInline let value: UnsafeMutablePointer<Value>

    package init(_ value: Value) {
        self.value = .allocate(capacity: 1)
        self.value.initialize(to: value)
    }

    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Runs `body` with exclusive access to the value. Always inlined: the storages call it from generic
    /// methods reached through `any MemoryStorage`, where a call would not be specialised (measured in a profile).
    @inlinable @inline(__always)
    package func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        mutex.lock()
        defer { mutex.unlock() }
        return try body(&value.pointee)
    }
}

extension Locked where Value: Sendable {
    /// A copy of the value, read under the lock.
    @inlinable
    package var current: Value { withLock { $0 } }
}
