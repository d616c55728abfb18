import Logging
import PresenceModel
import NIOCore
import NIOPosix
import NIOSSL
import XMPPStream

/// Opens an authenticated client stream to an XMPP server (RFC 6120): TCP, stream header, STARTTLS, SASL,
/// resource binding; then hands the session to a body and closes the connection when the body returns.
///
/// One call is one connection. Reconnecting is the caller's policy (``ReconnectBackoff`` says how long to
/// wait), because what to do after a reconnect (refresh the roster, reconcile) depends on what the session is
/// for.
public enum XMPPConnection {
    /// Connects, logs in and runs `body` with the bound session. Throws ``XMPPClientError`` for everything that
    /// goes wrong on the connection; errors thrown by `body` pass through.
    public static func withSession<Result>(
        _ configuration: XMPPClientConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "presence.xmpp"),
        isolation: isolated (any Actor)? = #isolation,
        _ body: (XMPPSession) async throws -> sending Result
    ) async throws -> sending Result {
        let host = configuration.connectHost
        let port = configuration.port
        let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        let lastReceived = Locked(NIODeadline.now())
        do {
            channel = try await ClientBootstrap(group: eventLoopGroup)
                .connectTimeout(TimeAmount(configuration.connectTimeout))
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .connect(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        // The silence counts from the connection, on the clock the keep-alive reads.
                        lastReceived.withLock { $0 = channel.eventLoop.now }
                        try channel.pipeline.syncOperations.addHandler(ActivityHandler(lastReceived: lastReceived))
                        return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw XMPPClientError.connect(host: host, port: port, reason: "\(error)")
        }
        logger.debug("connected", metadata: ["host": "\(host)", "port": "\(port)"])
        return try await channel.executeThenClose { inbound, outbound in
            let reader = StanzaReader(
                inbound: inbound, limits: configuration.streamLimits, lastReceived: lastReceived)
            let closeReason = reader.closeReason
            let timeout = configuration.negotiationTimeout
            let timer = channel.channel.eventLoop.scheduleTask(in: TimeAmount(timeout)) { [channel = channel.channel] in
                closeReason.withLock { $0 = .negotiationTimedOut(timeout) }
                channel.close(promise: nil)
            }
            let session: XMPPSession
            do {
                var negotiation = Negotiation(
                    configuration: configuration, channel: channel.channel, reader: reader, outbound: outbound,
                    logger: logger)
                session = try await negotiation.run()
            } catch {
                timer.cancel()
                throw error
            }
            timer.cancel()
            logger.debug(
                "logged in",
                metadata: ["jid": "\(session.jid)", "tls": "\(session.isEncrypted)", "sasl": "\(session.mechanism)"])
            let keepAlive = session.startKeepAlive(configuration.keepAlive)
            defer { keepAlive?.cancel() }
            return try await body(session)
        }
    }
}

/// The steps from the first stream header to a bound resource.
private struct Negotiation {
    let configuration: XMPPClientConfiguration
    let channel: any Channel
    let reader: StanzaReader
    let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    let logger: Logger
    var encrypted = false

    init(
        configuration: XMPPClientConfiguration, channel: any Channel, reader: StanzaReader,
        outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, logger: Logger
    ) {
        self.configuration = configuration
        self.channel = channel
        self.reader = reader
        self.outbound = outbound
        self.logger = logger
    }

    private var domain: String { String(configuration.account.domainpart) }

    mutating func run() async throws(XMPPClientError) -> XMPPSession {
        var features = try await openStream()
        if features.startTLS && configuration.tls != .off {
            try await startTLS()
            features = try await openStream()
        } else if configuration.tls == .required {
            throw .tls("the server does not offer STARTTLS and TLS is required (--xmpp-tls if-offered to allow this)")
        } else if features.startTLSRequired {
            throw .tls("the server requires STARTTLS but TLS is off")
        }
        let mechanism = try await authenticate(features)
        features = try await openStream()
        guard features.bind else { throw .protocolViolation("the server does not offer resource binding") }
        try await send(ResourceBinding.request(resource: configuration.resource))
        let jid = try ResourceBinding.boundJID(from: try await nextStanza())
        if features.sessionRequired {
            try await send(ResourceBinding.sessionRequest())
            let answer = try await nextStanza()
            guard let iq = IQ(answer), iq.id == ResourceBinding.sessionID, iq.kind == .result else {
                throw .protocolViolation(
                    "session establishment failed: \(IQ.errorCondition(of: answer) ?? "no result")")
            }
        }
        return XMPPSession(
            jid: jid, isEncrypted: encrypted, mechanism: mechanism, reader: reader, outbound: outbound,
            channel: channel)
    }

    /// Sends a stream header and reads the server's header and features.
    private func openStream() async throws(XMPPClientError) -> StreamFeatures {
        var writer = XMPPWriter()
        // RFC 6120 §4.7.1: the account is named in the header only once the stream is encrypted.
        writer.openStream(to: domain, from: encrypted ? configuration.account.rawValue : nil)
        try await send(writer.bytes)
        _ = try await reader.expectStreamHeader()
        return try StreamFeatures(try await nextStanza())
    }

    private mutating func startTLS() async throws(XMPPClientError) {
        var writer = XMPPWriter()
        writer.element("starttls", namespace: StreamFeatures.tlsNamespace)
        try await send(writer.bytes)
        let answer = try await nextStanza()
        guard answer.isElement(answer.root, named: "proceed", in: StreamFeatures.tlsNamespace) else {
            throw .tls("the server refused to start TLS (<\(answer.localName(of: answer.root))>)")
        }
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: configuration.clientTLS())
        } catch {
            throw .tls("cannot load the trusted certificates: \(error)")
        }
        let serverName = domain
        do {
            try await channel.eventLoop.submit { [channel] in
                let handler = try NIOSSLClientHandler(context: context, serverHostname: serverName)
                try channel.pipeline.syncOperations.addHandler(handler, position: .first)
            }.get()
        } catch {
            throw .tls("cannot start TLS: \(error)")
        }
        reader.restart()
        encrypted = true
        logger.debug("TLS started", metadata: ["server": "\(serverName)"])
    }

    private func authenticate(_ features: StreamFeatures) async throws(XMPPClientError) -> String {
        var sasl = SASLNegotiation(
            username: String(configuration.account.localpart ?? ""), password: configuration.password,
            allowPlain: encrypted || configuration.isLoopback)
        func step<T>(_ body: () throws(SASLFailure) -> T) throws(XMPPClientError) -> T {
            do { return try body() } catch { throw .authentication(error) }
        }
        try await send(try step { () throws(SASLFailure) in try sasl.start(mechanisms: features.mechanisms) })
        while true {
            let element = try await nextStanza()
            switch try step({ () throws(SASLFailure) in try sasl.receive(element) }) {
            case .send(let bytes): try await send(bytes)
            case .succeeded:
                reader.restart()
                return sasl.mechanism ?? ""
            }
        }
    }

    private func send(_ bytes: [UInt8]) async throws(XMPPClientError) {
        do { try await outbound.write(ByteBuffer(bytes: bytes)) } catch {
            throw await reader.explainWriteFailure(error)
        }
    }

    private func nextStanza() async throws(XMPPClientError) -> Stanza {
        guard let stanza = try await reader.nextStanza() else { throw .closed }
        return stanza
    }
}
