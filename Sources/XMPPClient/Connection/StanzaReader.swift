import NIOCore
import NIOSSL
import PresenceModel
import XMPPStream

/// Turns the connection's inbound bytes into stream events, one at a time, pulling bytes only when the events
/// read so far are used up (so a slow reader slows the server down instead of buffering without bound).
///
/// A stream restart (after STARTTLS and after SASL, RFC 6120 §5.4.3.3 and §6.4.6) starts a fresh parser.
final class StanzaReader {
    private var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private var parser: XMPPStreamParser
    private let configuration: XMPPStreamParser.Configuration
    private var pending: [XMPPStreamEvent] = []
    private var pendingIndex = 0
    /// A parse error found after some events of the same chunk: thrown once those are read.
    private var failure: XMPPClientError?
    /// When bytes last arrived (recorded by ``ActivityHandler``), for the keep-alive timer.
    let lastReceived: Locked<NIODeadline>
    /// Why the connection was closed on purpose (a timeout), so that the end of input is reported as that.
    let closeReason: Locked<XMPPClientError?>

    init(
        inbound: NIOAsyncChannelInboundStream<ByteBuffer>, limits: XMPPStreamLimits,
        lastReceived: Locked<NIODeadline>
    ) {
        self.inbound = inbound.makeAsyncIterator()
        configuration = XMPPStreamParser.Configuration(limits: limits)
        parser = XMPPStreamParser(configuration: configuration)
        self.lastReceived = lastReceived
        closeReason = Locked(nil)
    }

    /// Reads a new stream from here on.
    func restart() {
        parser = XMPPStreamParser(configuration: configuration)
        pending.removeAll()
        pendingIndex = 0
        failure = nil
    }

    /// The next event; `.streamClosed` when the server ended the stream. Throws when the connection ends without
    /// that, or the bytes are not a well-formed stream.
    func next() async throws(XMPPClientError) -> XMPPStreamEvent {
        while pendingIndex == pending.count {
            if let failure { throw failure }
            pending.removeAll(keepingCapacity: true)
            pendingIndex = 0
            let buffer: ByteBuffer?
            do {
                buffer = try await inbound.next()
            } catch {
                throw closeReason.withLock { $0 } ?? XMPPClientError.connectionError(error)
            }
            guard let buffer else { throw closeReason.withLock { $0 } ?? .closed }
            orderAfterEventLoop()
            let result = buffer.withUnsafeReadableBytes { bytes in
                Result { () throws(XMPPStreamError) in
                    try parser.feed(bytes) { pending.append($0) }
                }
            }
            if case .failure(let error) = result { failure = .malformedStream(error.description) }
        }
        defer { pendingIndex += 1 }
        return pending[pendingIndex]
    }

    /// Orders this task's reads of a received buffer after the event loop's writes to it, visibly to
    /// ThreadSanitizer.
    ///
    /// The buffer crosses threads through `NIOAsyncChannel`'s inbound stream, which resumes this task's
    /// continuation outside its lock; the concurrency runtime orders that hand-off, but ThreadSanitizer does not
    /// always see it on Linux and can report the buffer's allocation on the event loop as racing with the parse
    /// here. ``ActivityHandler`` takes this same lock on the event loop for every buffer, after the buffer exists
    /// and before it is passed on; taking it here, after the buffer arrived, is an edge ThreadSanitizer models
    /// (mutex release, then acquire). One uncontended lock per chunk read. The other direction, the event loop
    /// reusing the buffer once this task has let go of it, is ordered by reference counting, which
    /// ThreadSanitizer does not see: `script/thread-sanitizer.supp` names those reuses.
    private func orderAfterEventLoop() {
        _ = lastReceived.withLock { $0 }
    }

    /// The next stanza, with `<stream:error>` thrown as the error it is; nil when the stream closed.
    func nextStanza() async throws(XMPPClientError) -> Stanza? {
        switch try await next() {
        case .streamOpened: throw .protocolViolation("a second stream header")
        case .streamClosed: return nil
        case .stanza(let stanza):
            if stanza.isElement(stanza.root, named: "error", in: XMPPNamespace.streams) {
                let condition = stanza.children(of: stanza.root).first {
                    stanza.isElement($0, in: XMPPNamespace.streamErrors) && stanza.localName(of: $0) != "text"
                }
                let text = stanza.firstChild(of: stanza.root, named: "text", in: XMPPNamespace.streamErrors)
                throw .streamError(
                    condition: condition.map { stanza.localName(of: $0) } ?? "undefined-condition",
                    text: text.map { stanza.text(of: $0) })
            }
            return stanza
        }
    }

    /// Why a write failed: a write usually fails because the connection already closed for a reason the inbound
    /// side carries (a TLS handshake failure, a stream error), and that reason is the one worth reporting.
    func explainWriteFailure(_ writeError: any Error) async -> XMPPClientError {
        if let reason = closeReason.withLock({ $0 }) { return reason }
        do {
            while true { _ = try await next() }
        } catch {
            if case .closed = error { return .connectionError(writeError) }
            return error
        }
    }

    /// The header of a (re)started stream.
    func expectStreamHeader() async throws(XMPPClientError) -> StreamHeader {
        guard case .streamOpened(let header) = try await next() else {
            throw .protocolViolation("expected the server's stream header")
        }
        return header
    }
}

extension XMPPClientError {
    /// A transport error, with TLS failures told apart (they carry the certificate problem).
    static func connectionError(_ error: any Error) -> XMPPClientError {
        if error is NIOSSLError || error is NIOSSLExtraError || error is BoringSSLError {
            return .tls(String(describing: error))
        }
        return .transport(String(describing: error))
    }
}
