import Foundation
import Testing

/// The one limiter every test that starts a real program (Prosody, ejabberd, nginx, Chromium, a `presence serve`
/// process, a Python client) goes through: at most ``ServerSlots/count`` such tests run at a time, whatever else
/// the suite runs beside them; in-process tests run freely.
///
/// Swift Testing starts every test at once: two dozen real servers starting together on two cores would each take
/// many times what it takes alone, and so would every service inside the test process, so that a test's result
/// would depend on which tests happen to run beside it. A test or suite asks for a slot with the
/// ``Trait/realServers`` trait; each of its test cases then holds one slot while it runs. A test case already
/// holding a slot (the trait on a suite and on its test) does not take a second one.
package actor ServerSlots {
    /// The slots: `TEST_SERVER_SLOTS` when it is a positive number, otherwise two per core the process may run on
    /// (a real server's test spends much of its time waiting on the server: on two cores, four slots ran the debug
    /// pass in 179 s where two took 253 s, and passed with both cores hogged).
    package static let count: Int = {
        if let text = ProcessInfo.processInfo.environment["TEST_SERVER_SLOTS"], let value = Int(text), value > 0 {
            return value
        }
        return max(1, 2 * ProcessInfo.processInfo.activeProcessorCount)
    }()

    /// The one limiter of the test process.
    package static let shared = ServerSlots(count: count)

    /// Whether the current task already holds a slot.
    @TaskLocal private static var holding = false

    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(count: Int) { free = count }

    /// Runs `body` holding a slot, waiting for one first when all are taken.
    package nonisolated func withSlot<Value: Sendable>(
        _ body: @Sendable () async throws -> Value
    ) async rethrows -> Value {
        if Self.holding { return try await body() }
        await acquire()
        do {
            let value = try await Self.$holding.withValue(true) { try await body() }
            await release()
            return value
        } catch {
            await release()
            throw error
        }
    }

    private func acquire() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty {
            free += 1
        } else {
            // The slot passes straight to the longest waiter.
            waiting.removeFirst().resume()
        }
    }
}

/// The trait that makes each test case it applies to hold a slot of ``ServerSlots`` while it runs.
package struct RealServersTrait: TestTrait, SuiteTrait, TestScoping {
    package var isRecursive: Bool { true }

    package func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        // Per test case, never for a whole suite: a suite holding one slot would hold it while its tests wait.
        testCase == nil ? nil : self
    }

    package func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await ServerSlots.shared.withSlot { try await function() }
    }
}

extension Trait where Self == RealServersTrait {
    /// The test starts real programs: it runs while it holds one of ``ServerSlots``.
    package static var realServers: Self { RealServersTrait() }
}
