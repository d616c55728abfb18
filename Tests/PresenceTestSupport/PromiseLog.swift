import Foundation

/// How long something the guides promise took in a test against real programs, printed and, when
/// `TEST_PROMISE_LOG` names a file, appended to it as a line of `name`, the promise and the measurement in
/// seconds, tab-separated.
///
/// The suite never fails on such a figure: on a machine busy with the rest of the suite, a promise made for an idle
/// one says nothing about the code. `Benchmarks/Scripts/promises.sh` runs the tests that measure promises one at a
/// time, several rounds, and prints each promise against the median and worst of its measurements.
package enum PromiseLog {
    /// What the service promises about time (Operations.md, "What the service promises about time"), each bound
    /// in one place.
    package enum Promise {
        /// A frozen XMPP server is noticed within 30 s of its last byte.
        package static let frozenServerNoticed: Duration = .seconds(30)
        /// A shipped shaper is named within 10 s of the service's start.
        package static let shaperNamed: Duration = .seconds(10)
        /// SIGTERM ends the service within 2 s, whatever its XMPP server does.
        package static let stopped: Duration = .seconds(2)
        /// A status the server no longer holds is corrected within the resync interval plus two passes over the
        /// members shown available, plus the server's answers: with a handful of members, 10 s past the interval.
        package static func resyncCorrected(interval: Duration) -> Duration { interval + .seconds(10) }
    }

    /// Records that `name` (for example "a frozen prosody is noticed") took `measured`, against `promise`.
    package static func record(_ name: String, promise: Duration, measured: Duration) {
        print("promise: \(name): \(format(measured)) (the promise is \(format(promise)))")
        guard let path = ProcessInfo.processInfo.environment["TEST_PROMISE_LOG"] else { return }
        let line = "\(name)\t\(seconds(promise))\t\(seconds(measured))\n"
        lock.withLock {
            if !FileManager.default.fileExists(atPath: path) {
                _ = FileManager.default.createFile(atPath: path, contents: nil)
            }
            guard let handle = FileHandle(forWritingAtPath: path) else { return }
            defer { try? handle.close() }
            _ = try? handle.seekToEnd()
            try? handle.write(contentsOf: Data(line.utf8))
        }
    }

    private static let lock = NSLock()

    private static func seconds(_ duration: Duration) -> String {
        String(format: "%.3f", duration.inSeconds)
    }

    private static func format(_ duration: Duration) -> String { seconds(duration) + " s" }
}
