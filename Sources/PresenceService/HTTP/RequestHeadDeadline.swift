import NIOCore

/// Closes a connection whose next request head has not fully arrived within a deadline: from the connection's
/// start, and from the end of each answer on a connection kept alive.
///
/// A read-idle timeout does not stop a client that sends its headers one byte a second (each byte resets it); a
/// deadline for the whole head does. It is told of each complete head and each answer's end by the connection's
/// handler (``StorageAnswerHandler``), and is silent while a request is being answered, however long a change
/// stream runs. Its time is the event loop's clock (`EventLoop.now`), which a test's `EmbeddedEventLoop` moves by
/// hand. It lives on its connection's event loop and is called only there.
final class RequestHeadDeadline {
    private let timeout: TimeAmount
    private let eventLoop: any EventLoop
    /// What closes the connection; nil once it is closed or stopped.
    private var expire: (() -> Void)?
    /// When the wait for the current head began; nil while a request is being answered.
    private var waitingSince: NIODeadline?
    /// One timer per connection, re-armed only when it fires: scheduling and cancelling a task per request cost
    /// the single-JID benchmark about a tenth of its rate.
    private var timer: Scheduled<Void>?
    /// Requests whose head arrived and whose answer has not ended (pipelining can make it more than one).
    private var inFlight = 0

    init(timeout: Duration, eventLoop: any EventLoop) {
        self.timeout = .nanoseconds(
            Int64(timeout.components.seconds) * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000)
        self.eventLoop = eventLoop
    }

    /// The connection is open: the wait for its first head begins; `expire` closes it when a wait runs out.
    func start(expire: @escaping () -> Void) {
        self.expire = expire
        startWaiting()
    }

    /// The connection has closed.
    func stop() {
        timer?.cancel()
        timer = nil
        expire = nil
    }

    /// A whole request head arrived.
    func headArrived() {
        inFlight += 1
        waitingSince = nil
    }

    /// An answer's last byte was written: with nothing else in flight, the wait for the next head begins.
    func answerEnded() {
        inFlight = max(inFlight - 1, 0)
        if inFlight == 0, expire != nil { startWaiting() }
    }

    private func startWaiting() {
        waitingSince = eventLoop.now
        if timer == nil { schedule(in: timeout) }
    }

    private func schedule(in delay: TimeAmount) {
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        timer = eventLoop.scheduleTask(in: delay) {
            let deadline = bound.value
            deadline.timer = nil
            guard let since = deadline.waitingSince else { return }  // answering: the next wait re-arms
            let due = since + deadline.timeout
            let now = deadline.eventLoop.now
            if due <= now {
                deadline.expire?()
                deadline.stop()
            } else {
                deadline.schedule(in: due - now)
            }
        }
    }
}
