import NIOCore

/// Sends stanzas on a session from any task: what a session's reader hands to the code that writes beside it
/// (probes sent on behalf of lookups, say). Each call writes its bytes as one buffer, so stanzas sent from
/// different tasks never interleave; bytes that must stay in order (a probe and the ping after it) go in one call.
public struct XMPPStanzaSender: Sendable {
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>

    init(outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>) {
        self.outbound = outbound
    }

    /// Sends one or more complete stanzas; throws ``XMPPClientError/closed`` once the connection is gone.
    public func send(_ bytes: [UInt8]) async throws(XMPPClientError) {
        do { try await outbound.write(ByteBuffer(bytes: bytes)) } catch { throw .closed }
    }
}
