import PresenceModel
import NIOCore

/// Watches a connection for silence on its event loop's clock (`EventLoop.now`, which a test's
/// `EmbeddedEventLoop` moves by hand): a ping after ``KeepAlive/interval`` without a byte from the server, and the
/// connection given up as dead after ``KeepAlive/interval`` + ``KeepAlive/timeout`` without one.
///
/// The silence is checked every ``KeepAlive/checkPeriod`` from the start, so a verdict comes at the first check
/// at or after its moment: with the defaults (10 s and 10 s, checked every second) a connection whose last byte
/// came at a check is pinged at exactly 10 s and given up at exactly 20 s. One ping per silence: another is sent
/// only once something has arrived since the last.
struct KeepAliveMonitor: Sendable {
    let keepAlive: KeepAlive
    /// When the last byte arrived, on the event loop's clock (``ActivityHandler`` writes it).
    let lastReceived: Locked<NIODeadline>
    /// Sends the ping with this id.
    let ping: @Sendable (String) -> Void
    /// Closes the connection as dead after this much silence.
    let dead: @Sendable (Duration) -> Void

    private static let pingPrefix = "keepalive-"

    /// The id of the `count`th keep-alive ping.
    static func pingID(_ count: Int) -> String { "\(pingPrefix)\(count)" }

    /// Whether `id` is a keep-alive ping's: its answer is the session's own, never handed to the reader.
    static func isPingID(_ id: String) -> Bool { id.hasPrefix(pingPrefix) }

    /// Starts checking on `eventLoop` until cancelled, or until the connection is found dead.
    func start(on eventLoop: any EventLoop) -> RepeatedTask {
        let interval = TimeAmount(keepAlive.interval)
        let deadline = TimeAmount(keepAlive.interval + keepAlive.timeout)
        let period = TimeAmount(keepAlive.checkPeriod)
        let pingSent = Locked<(count: Int, at: NIODeadline?)>((0, nil))
        return eventLoop.scheduleRepeatedTask(initialDelay: period, delay: period) { [self] task in
            let now = eventLoop.now
            let received = lastReceived.withLock { $0 }
            let silence = now - received
            if silence >= deadline {
                task.cancel()
                dead(Duration(silence))
                return
            }
            guard silence >= interval else { return }
            let id: String? = pingSent.withLock { state in
                if let at = state.at, at > received { return nil }
                state.count += 1
                state.at = now
                return Self.pingID(state.count)
            }
            if let id { ping(id) }
        }
    }
}
