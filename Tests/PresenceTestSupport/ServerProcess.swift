import Foundation
import PresenceStore

/// The running process of a test server, replaced when the server starts again: killing it as a crash would,
/// freezing it as a hung host, and starting the same program again until it is ready.
package final class ServerProcess: Sendable {
    private let running: Locked<Process>
    /// Starts the server's program, the same way every time, so that a restart finds the same data and ports.
    private let launch: @Sendable () throws -> Process
    /// Waits until the program serves (or has died): true when it is ready.
    private let waitUntilReady: @Sendable (Process) -> Bool

    /// Starts the program and waits until it is ready; nil when it died or never became ready (it is killed then).
    package static func start(
        launch: @escaping @Sendable () throws -> Process, waitUntilReady: @escaping @Sendable (Process) -> Bool
    ) throws -> ServerProcess? {
        let process = try launch()
        guard waitUntilReady(process) else {
            ServerProcess.kill(process)
            return nil
        }
        return ServerProcess(process, launch: launch, waitUntilReady: waitUntilReady)
    }

    private init(
        _ process: Process, launch: @escaping @Sendable () throws -> Process,
        waitUntilReady: @escaping @Sendable (Process) -> Bool
    ) {
        running = Locked(process)
        self.launch = launch
        self.waitUntilReady = waitUntilReady
    }

    package var isRunning: Bool { running.withLock { $0.isRunning } }

    /// SIGKILL, and SIGCONT so that a frozen process dies too; then waits until it is gone.
    package func kill() { running.withLock { ServerProcess.kill($0) } }

    /// SIGSTOP: connections stay open and nothing answers.
    package func pause() { signal(SIGSTOP) }

    /// SIGCONT after ``pause()``.
    package func resume() { signal(SIGCONT) }

    /// Kills the process and starts the program again, up to `attempts` times `pausing` seconds apart (a killed
    /// process's sockets may hold its ports for a moment); false when it never became ready.
    package func restart(attempts: Int, pausing: TimeInterval) throws -> Bool {
        kill()
        for _ in 0 ..< attempts {
            let process = try launch()
            if waitUntilReady(process) {
                running.withLock { $0 = process }
                return true
            }
            ServerProcess.kill(process)
            Thread.sleep(forTimeInterval: pausing)
        }
        return false
    }

    private func signal(_ signal: Int32) {
        Foundation.kill(running.withLock { $0.processIdentifier }, signal)
    }

    private static func kill(_ process: Process) {
        if process.isRunning {
            Foundation.kill(process.processIdentifier, SIGKILL)
            Foundation.kill(process.processIdentifier, SIGCONT)
        }
        // Also when it died by itself: Foundation keeps the Process until `waitUntilExit` lets it go.
        process.waitUntilExit()
    }
}
