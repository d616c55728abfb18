import PresenceModel
import NIOCore
import XMPPStream

/// An authenticated, bound client stream: read the server's stanzas, send your own.
///
/// The session answers what every client must without bothering its user: the server's XEP-0199 pings, and the
/// answers to its own keep-alive pings. Everything else, including IQ requests, is handed to the reader.
/// Use it from the task that opened it (``XMPPConnection/withSession(_:eventLoopGroup:logger:isolation:_:)``).
public final class XMPPSession {
    /// The full JID the server bound, `user@domain/resource`.
    public let jid: String
    /// Whether the stream runs over TLS.
    public let isEncrypted: Bool
    /// The SASL mechanism used to log in.
    public let mechanism: String
    /// The keep-alive pings this session has sent.
    public let keepAlivePings = KeepAlivePings()
    private let reader: StanzaReader
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private let channel: any Channel

    init(
        jid: String, isEncrypted: Bool, mechanism: String, reader: StanzaReader,
        outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, channel: any Channel
    ) {
        self.jid = jid
        self.isEncrypted = isEncrypted
        self.mechanism = mechanism
        self.reader = reader
        self.outbound = outbound
        self.channel = channel
    }

    /// The account part of ``jid``: `user@domain`.
    public var bareJID: Substring { jid.split(separator: "/", maxSplits: 1).first ?? Substring(jid) }

    /// A handle that sends on this session from other tasks, for as long as the session lasts.
    public var sender: XMPPStanzaSender { XMPPStanzaSender(outbound: outbound) }

    /// Sends one or more complete stanzas.
    public func send(_ bytes: [UInt8]) async throws(XMPPClientError) {
        do { try await outbound.write(ByteBuffer(bytes: bytes)) } catch {
            throw await reader.explainWriteFailure(error)
        }
    }

    /// The server's next stanza; nil when it closed the stream cleanly. A `<stream:error>` is thrown as
    /// ``XMPPClientError/streamError(condition:text:)``.
    public func next() async throws(XMPPClientError) -> Stanza? {
        while true {
            guard let stanza = try await reader.nextStanza() else { return nil }
            if let iq = IQ(stanza) {
                if iq.kind == .get, iq.payloadNamespace == IQ.pingNamespace {
                    try await send(IQ.result(answering: iq))
                    continue
                }
                if iq.kind == .result || iq.kind == .error, KeepAliveMonitor.isPingID(iq.id) { continue }
            }
            return stanza
        }
    }

    /// Ends the stream politely (`</stream:stream>`); the connection closes when the session's body returns.
    public func close() async {
        var writer = XMPPWriter()
        writer.closeStream()
        try? await send(writer.bytes)
    }

    /// How long ``closeGracefully(timeout:)`` waits for the server's close by default: what a stop waits for the
    /// server at most.
    public static let defaultCloseTimeout: Duration = .milliseconds(500)

    /// Ends the stream politely, also from a cancelled task (a service that is stopping): writes
    /// `</stream:stream>` on the connection itself and waits up to `timeout` for the server to close its side, so
    /// the server ends the session as a logout rather than a lost connection.
    ///
    /// The deadline counts from the call, not from the end of the write: a server that reads slowly (a rate limit)
    /// or not at all (frozen) leaves earlier bytes queued before the close, and the connection is then closed
    /// without waiting for them.
    public func closeGracefully(timeout: Duration = defaultCloseTimeout) async {
        var writer = XMPPWriter()
        writer.closeStream()
        let bytes = writer.bytes
        let channel = channel
        let deadline = channel.eventLoop.scheduleTask(in: TimeAmount(timeout)) { channel.close(promise: nil) }
        channel.writeAndFlush(ByteBuffer(bytes: bytes), promise: nil)
        try? await channel.closeFuture.get()
        deadline.cancel()
    }

    /// Pings the server when it has been silent for `interval`, and closes the connection as dead when nothing
    /// arrives for `interval + timeout` (``KeepAliveMonitor``), on the connection's event loop until cancelled.
    func startKeepAlive(_ keepAlive: KeepAlive?) -> RepeatedTask? {
        guard let keepAlive else { return nil }
        let closeReason = reader.closeReason
        let pings = keepAlivePings
        let channel = channel
        let monitor = KeepAliveMonitor(
            keepAlive: keepAlive, lastReceived: reader.lastReceived,
            ping: { id in
                pings.recordSent()
                channel.writeAndFlush(ByteBuffer(bytes: IQ.ping(id: id)), promise: nil)
            },
            dead: { silence in
                closeReason.withLock { $0 = .deadConnection(silentFor: silence) }
                channel.close(promise: nil)
            })
        return monitor.start(on: channel.eventLoop)
    }
}

extension Duration {
    init(_ amount: TimeAmount) { self = .nanoseconds(amount.nanoseconds) }
}
