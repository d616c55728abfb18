import Foundation

/// How long a test waits for something a real program does (a server starting, a process ending, a condition
/// becoming true, an answer arriving) before it fails: a timeout, never a claim about speed.
///
/// Every deadline is named here, at ten times or more what an idle machine needs, and scaled by one setting,
/// `TEST_DEADLINE_SCALE` (a positive number, 1 by default; not a `PRESENCE_*` name, which the service would take
/// for its own configuration): a slower machine than any seen so far raises it instead of editing tests. Under
/// ThreadSanitizer, where everything runs several times slower, every deadline is three times as long again. What
/// the product promises about time is measured by `Benchmarks/Scripts/promises.sh`, never asserted here; what its
/// timers do is tested with an injected clock, in milliseconds.
package enum TestDeadline {
    /// `TEST_DEADLINE_SCALE` (1 when unset or not a positive number), times 3 under ThreadSanitizer.
    package static let scale: Double = {
        let sanitizer: Double = underThreadSanitizer ? 3 : 1
        guard let text = ProcessInfo.processInfo.environment["TEST_DEADLINE_SCALE"], let value = Double(text),
            value > 0
        else { return sanitizer }
        return value * sanitizer
    }()

    /// `duration` times ``scale``.
    package static func scaled(_ duration: Duration) -> Duration { duration * scale }

    /// A condition a test waits for (``eventually(timeout:_:)``): an update applied, a status seen, a stream
    /// opened. Under a second on an idle machine.
    package static let condition = scaled(.seconds(30))

    /// A condition that needs a real server to go through a whole cycle first: a roster snapshot of hundreds of
    /// members, a reconnection after a kill, a resync round, a shaper's window. A few seconds on an idle machine.
    package static let serverCycle = scaled(.seconds(120))

    /// A real server (Prosody, ejabberd, nginx, a `presence serve`) listening after it was started: one to three
    /// seconds on an idle machine, ejabberd's Erlang node the slowest.
    package static let serverReady = scaled(.seconds(60))

    /// A process the test ran (the `presence` command, a Python client, a browser script) to end by itself.
    package static let processExit = scaled(.seconds(300))

    /// One HTTP answer or one read on a socket: milliseconds on an idle machine.
    package static let read = scaled(.seconds(30))

    /// A service told to stop (SIGTERM) to have ended: under a second on an idle machine whatever its XMPP server
    /// does, while a stop that waited for a shaped or frozen server to read its backlog would take minutes.
    package static let shutdown = scaled(.seconds(15))
}
