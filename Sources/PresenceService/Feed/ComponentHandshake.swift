import Crypto
import PresenceWire
import XMPPStream

/// The server side of the XEP-0114 component handshake on the feed port, so that any XMPP component library can
/// feed the service with a shared secret (`--feed-secret-file`).
///
/// The feeder opens a stream in `jabber:component:accept`; the service answers with its own header carrying a
/// fresh random stream id; the feeder sends `<handshake>` with the lower-case hex SHA-1 of the id followed by the
/// secret; the service answers `<handshake/>` and from then on applies the feeder's stanzas. A wrong handshake,
/// or any stanza before a right one, ends the stream with `<not-authorized/>`, and nothing the feeder sent is
/// applied. The comparison is of SHA-1 digests, in constant time.
///
/// Driven from inside the ingest session's parse (``IngestSession/onEvent`` and ``IngestSession/admits``); the
/// bytes to answer are collected in ``output`` and written by the connection after each read.
final class ComponentHandshake {
    enum State: Equatable {
        /// Waiting for the feeder's stream header.
        case awaitingHeader
        /// Our header is sent; waiting for `<handshake>`.
        case awaitingHandshake
        /// The feeder proved the secret: its stanzas are applied.
        case accepted
        /// The feeder failed: close with `not-authorized`.
        case refused(reason: String)
    }

    private(set) var state = State.awaitingHeader
    /// What to send the feeder after the current read.
    private(set) var output: [UInt8] = []
    private let secret: [UInt8]
    let streamID: String

    init(secret: [UInt8]) {
        self.secret = secret
        var generator = SystemRandomNumberGenerator()  // getrandom(2) on Linux: unpredictable ids
        streamID = (0 ..< 2).map { _ in String(generator.next() as UInt64, radix: 16) }.joined()
    }

    /// Told every parser event: answers the stream header.
    func handle(_ event: XMPPStreamEvent) {
        guard case .streamOpened(let header) = event, state == .awaitingHeader else { return }
        guard !header.isImplicit else {
            state = .refused(reason: "no stream header")
            return
        }
        var writer = XMPPWriter()
        writer.openStream(namespace: XMPPNamespace.componentAccept, from: header.to, id: streamID, version: nil)
        output += writer.bytes
        state = .awaitingHandshake
    }

    /// Whether a stanza may be decoded and applied: only once the handshake succeeded. The handshake itself is
    /// checked here and never applied.
    func admits(_ stanza: Stanza) -> Bool {
        switch state {
        case .accepted:
            return true
        case .refused:
            return false
        case .awaitingHeader:
            state = .refused(reason: "a stanza before the stream header")
            return false
        case .awaitingHandshake:
            guard stanza.isElement(stanza.root, named: "handshake", in: XMPPNamespace.componentAccept) else {
                state = .refused(reason: "a stanza before the handshake")
                return false
            }
            let expected = Insecure.SHA1.hash(data: Array(streamID.utf8) + secret)
            let presented = ComponentHandshake.bytes(ofHex: stanza.text(of: stanza.root))
            if let presented, expected == presented {
                state = .accepted
                output += Array("<handshake/>".utf8)
            } else {
                state = .refused(reason: "wrong handshake")
            }
            return false
        }
    }

    /// Takes what is to be sent to the feeder.
    func takeOutput() -> [UInt8] {
        defer { output.removeAll() }
        return output
    }

    /// The bytes of a hex string (either case, white space ignored), nil unless it is 20 bytes of hex.
    static func bytes(ofHex text: String) -> [UInt8]? {
        let digits = Array(text.utf8).filter { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D) }
        guard digits.count == 2 * Insecure.SHA1.byteCount else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Insecure.SHA1.byteCount)
        var index = 0
        while index < digits.count {
            guard let high = HexDigit.value(of: digits[index]), let low = HexDigit.value(of: digits[index + 1]) else {
                return nil
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}
