import Foundation

/// Runs `work`, which blocks (starting a server, waiting for a process), on a thread of its own and waits for it
/// without holding a thread of Swift's cooperative pool.
///
/// The pool has one thread per core, two on a small CI machine: a fixture that blocks one of them for the second
/// an ejabberd node takes to start stalls every other test in the process, including services that run inside it.
package func onAThreadOfItsOwn<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

/// ``onAThreadOfItsOwn(_:)`` for work that cannot fail.
package func onAThreadOfItsOwn<Value: Sendable>(_ work: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: work()) }.start()
    }
}
