/// A value that arrives once and that any number of tasks wait for: the first ``fulfil(_:)`` wins, and every
/// waiter, present or later, gets that value. Waiting suspends without blocking a thread.
package final class Promise<Value: Sendable>: Sendable {
    private let state = Locked<(value: Value?, waiters: [CheckedContinuation<Value, Never>])>((nil, []))

    package init() {}

    /// The value, once fulfilled.
    package func value() async -> Value {
        await withCheckedContinuation { continuation in
            let ready: Value? = state.withLock { state in
                if let value = state.value { return value }
                state.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Sets the value and wakes every waiter; false (and nothing changes) when it was already set.
    @discardableResult
    package func fulfil(_ value: Value) -> Bool {
        let waiters: [CheckedContinuation<Value, Never>]? = state.withLock { state in
            guard state.value == nil else { return nil }
            state.value = value
            defer { state.waiters = [] }
            return state.waiters
        }
        guard let waiters else { return false }
        for waiter in waiters { waiter.resume(returning: value) }
        return true
    }
}
