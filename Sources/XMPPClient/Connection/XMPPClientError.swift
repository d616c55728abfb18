/// Why a client connection could not be made or did not last, precise enough to act on.
public enum XMPPClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The host name did not resolve or nobody accepted the connection.
    case connect(host: String, port: Int, reason: String)
    /// TLS could not be used: the server does not offer it though it is required, refused to start it, or its
    /// certificate did not verify (the reason says which problem).
    case tls(String)
    /// The login was refused or could not be attempted.
    case authentication(SASLFailure)
    /// The server ended the stream with an error condition (RFC 6120 §4.9.3), e.g. `conflict` or
    /// `system-shutdown`.
    case streamError(condition: String, text: String?)
    /// The server sent something the protocol does not allow at that point.
    case protocolViolation(String)
    /// The server's bytes are not a well-formed XMPP stream, or a stanza broke a limit.
    case malformedStream(String)
    /// Binding the resource failed with this stanza error condition.
    case bindFailed(condition: String)
    /// The login did not finish within the negotiation timeout.
    case negotiationTimedOut(Duration)
    /// Nothing arrived from the server for this long, not even the answer to a ping.
    case deadConnection(silentFor: Duration)
    /// The connection failed under the stream (reset, unreachable).
    case transport(String)
    /// The connection closed without a stream error.
    case closed

    /// Whether trying again later can help: a refused password or a certificate that does not verify do not
    /// mend themselves, but they may be mended by an operator, so a source keeps trying at its longest delay.
    public var isPermanent: Bool {
        switch self {
        case .authentication, .tls: true
        default: false
        }
    }

    /// Whether the server ended the session because another client bound the same resource of the account
    /// (RFC 6120 §4.9.3.3 `conflict`; Prosody and ejabberd both replace the older session this way). Logging in
    /// again would replace the other client in turn.
    public var isResourceConflict: Bool {
        if case .streamError(condition: "conflict", _) = self { true } else { false }
    }

    public var description: String {
        switch self {
        case .connect(let host, let port, let reason): "cannot connect to \(host):\(port): \(reason)"
        case .tls(let reason): "TLS failed: \(reason)"
        case .authentication(let failure): failure.description
        case .streamError(let condition, let text):
            "the server ended the stream: \(condition)" + (text.map { " (\($0))" } ?? "")
        case .protocolViolation(let what): "protocol violation: \(what)"
        case .malformedStream(let what): "malformed stream from the server: \(what)"
        case .bindFailed(let condition): "resource binding failed: \(condition)"
        case .negotiationTimedOut(let timeout): "the login did not finish within \(timeout)"
        case .deadConnection(let silence): "the connection is dead: nothing from the server for \(silence)"
        case .transport(let reason): "the connection failed: \(reason)"
        case .closed: "the server closed the connection"
        }
    }
}
