import NIOSSL
import PresenceModel
import XMPPStream

/// Everything a client connection to an XMPP server is told: the account, where the server is, how the stream is
/// protected and how a silent connection is noticed. Each limit has a default.
///
/// The password is held here only to answer the SASL exchange; it is not part of any description and is never
/// logged.
public struct XMPPClientConfiguration: Sendable {
    /// The account, `user@domain`; its domain is the stream's `to` and the name TLS certificates are checked against.
    public var account: BareJID
    public var password: String
    /// The resource asked for when binding; the server may assign another. Nil lets the server choose.
    public var resource: String?
    /// Where to connect; the account's domain when nil (no SRV lookup).
    public var host: String?
    public var port: Int
    public var tls: TLSPolicy
    /// A PEM file of the certificate authorities to trust instead of the system's store.
    public var trustedCertificatesFile: String?
    public var connectTimeout: Duration
    /// Longest the whole login (TLS, SASL, binding) may take.
    public var negotiationTimeout: Duration
    /// Nil: no keep-alive, a silent connection is never closed.
    public var keepAlive: KeepAlive?
    public var streamLimits: XMPPStreamLimits

    public static let defaultPort = 5222
    /// The largest stanza a server may send: a roster result holds every contact (about 60 bytes and two elements
    /// each), so the feed port's 256 KiB would stop a watcher at a few thousand members. 32 MiB holds a roster of
    /// about half a million.
    public static let defaultMaxStanzaBytes = 32 * 1024 * 1024

    /// The limits for a server's stream, from the largest stanza allowed: elements as the feed port's depth, and
    /// at most one element per 16 bytes.
    public static func streamLimits(maxStanzaBytes: Int) -> XMPPStreamLimits {
        XMPPStreamLimits(
            maxStanzaBytes: maxStanzaBytes, maxElementDepth: XMPPStreamLimits.defaultMaxElementDepth,
            maxChildElements: max(XMPPStreamLimits.defaultMaxChildElements, maxStanzaBytes / 16))
    }

    public static let defaultStreamLimits = streamLimits(maxStanzaBytes: defaultMaxStanzaBytes)
    public static let defaultConnectTimeout: Duration = .seconds(10)
    public static let defaultNegotiationTimeout: Duration = .seconds(30)

    public init(
        account: BareJID, password: String, resource: String? = nil, host: String? = nil,
        port: Int = defaultPort, tls: TLSPolicy? = nil, trustedCertificatesFile: String? = nil,
        connectTimeout: Duration = defaultConnectTimeout, negotiationTimeout: Duration = defaultNegotiationTimeout,
        keepAlive: KeepAlive? = KeepAlive(),
        streamLimits: XMPPStreamLimits = XMPPClientConfiguration.defaultStreamLimits
    ) {
        self.account = account
        self.password = password
        self.resource = resource
        self.host = host
        self.port = port
        self.trustedCertificatesFile = trustedCertificatesFile
        self.connectTimeout = connectTimeout
        self.negotiationTimeout = negotiationTimeout
        self.keepAlive = keepAlive
        self.streamLimits = streamLimits
        let connectsTo = host ?? String(account.domainpart)
        self.tls = tls ?? TLSPolicy.default(forHost: connectsTo)
    }

    /// The host the connection goes to.
    public var connectHost: String { host ?? String(account.domainpart) }

    /// Whether the host is a loopback address, where PLAIN may be used without TLS and TLS is only used if offered.
    public var isLoopback: Bool { TLSPolicy.isLoopback(connectHost) }

    /// How the server's certificates are trusted, for the XMPP stream and every other interface of the same
    /// server the watcher uses: TLS 1.2 at least, verified against ``trustedCertificatesFile`` when given, the
    /// system's store otherwise.
    public func clientTLS() throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        if let file = trustedCertificatesFile {
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(file))
        }
        return tls
    }
}

/// Whether the stream is encrypted with STARTTLS (RFC 6120 §5).
public enum TLSPolicy: String, Sendable, CaseIterable {
    /// Refuse to log in unless the server offers STARTTLS and the certificate verifies.
    case required
    /// Use STARTTLS when offered (the certificate must then verify), log in without it otherwise.
    case ifOffered = "if-offered"
    /// Never start TLS, even when offered (only where the server does not require it).
    case off

    /// `required`, except on a loopback address where `if-offered`.
    public static func `default`(forHost host: String) -> TLSPolicy { isLoopback(host) ? .ifOffered : .required }

    /// 127.0.0.0/8, ::1 and `localhost`.
    public static func isLoopback(_ host: String) -> Bool { LoopbackHost.contains(host) }
}

/// How a connection that has gone silent is found out (XEP-0199 pings to the server).
///
/// A server that stops without closing the connection (a frozen process, a partition that drops packets) sends
/// nothing, and nothing else tells a client: the keep-alive is what turns such a hang into a closed connection,
/// so what the watcher shows stops being presented as live. With the defaults a hang is noticed 20 to 21 s after
/// the server's last byte, at the cost of one ping every 10 s on a connection that is otherwise idle and none on
/// one that carries presence.
public struct KeepAlive: Sendable, Hashable {
    /// A ping is sent after this long without anything from the server.
    public var interval: Duration
    /// The connection is closed as dead when nothing at all arrives for `interval + timeout`.
    public var timeout: Duration

    public static let defaultInterval: Duration = .seconds(10)
    public static let defaultTimeout: Duration = .seconds(10)

    public init(interval: Duration = defaultInterval, timeout: Duration = defaultTimeout) {
        self.interval = interval
        self.timeout = timeout
    }

    /// How often the connection's silence is checked: a tenth of the shorter of the two periods, between 50 ms
    /// and 1 s.
    public var checkPeriod: Duration {
        min(max(min(interval, timeout) / 10, .milliseconds(50)), .seconds(1))
    }
}
