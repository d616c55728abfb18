import Logging
import PresenceModel
import XMPPClient
import XMPPStream

/// A member of the test's organisation: a real client session of this package's connection, logged in as one
/// account and resource, sending what the test tells it to. No keep-alive: it never reads what the server sends.
package final class MemberClient: Sendable {
    private enum Command: Sendable {
        case send([UInt8], CheckedContinuation<Void, any Error>)
        case close
    }

    private let commands: AsyncStream<Command>.Continuation
    private let task: Task<Void, any Error>

    /// Logs in; returns once the session is bound.
    package init(_ user: String, password: String, resource: String, server: XMPPEndpoint) async throws {
        let (stream, continuation) = AsyncStream.makeStream(of: Command.self)
        commands = continuation
        let configuration = XMPPClientConfiguration(
            account: try BareJID("\(user)@\(server.domain)"), password: password, resource: resource,
            host: "127.0.0.1", port: server.port, tls: server.caFile == nil ? .off : .required,
            trustedCertificatesFile: server.caFile, keepAlive: nil)
        let (ready, readyContinuation) = AsyncThrowingStream<Void, any Error>.makeStream()
        task = Task {
            do {
                try await XMPPConnection.withSession(configuration) { session in
                    readyContinuation.yield(())
                    for await command in stream {
                        switch command {
                        case .send(let bytes, let done):
                            do {
                                try await session.send(bytes)
                                done.resume()
                            } catch {
                                done.resume(throwing: error)
                            }
                        case .close:
                            await session.close()
                            return
                        }
                    }
                }
                readyContinuation.finish()
                await MemberClient.refuseTheRest(of: stream, continuation)
            } catch {
                readyContinuation.finish(throwing: error)
                await MemberClient.refuseTheRest(of: stream, continuation)
                throw error
            }
        }
        var iterator = ready.makeAsyncIterator()
        guard try await iterator.next() != nil else { throw XMPPClientError.closed }
    }

    deinit { commands.finish() }

    /// Sends an available presence (RFC 6121 §4.7).
    package func available(show: String? = nil, status: String? = nil, priority: Int? = nil) async throws {
        var writer = XMPPWriter()
        writer.presence(show: show, status: status, priority: priority)
        try await send(writer.bytes)
    }

    /// Sends raw stanza bytes; throws once the session has ended (the server went away or the member logged off).
    package func send(_ bytes: [UInt8]) async throws {
        try await withCheckedThrowingContinuation { done in
            if case .terminated = commands.yield(.send(bytes, done)) { done.resume(throwing: XMPPClientError.closed) }
        }
    }

    /// After the session: no more commands are taken, and those already queued fail instead of waiting forever.
    private static func refuseTheRest(
        of stream: AsyncStream<Command>, _ continuation: AsyncStream<Command>.Continuation
    ) async {
        continuation.finish()
        for await command in stream {
            if case .send(_, let done) = command { done.resume(throwing: XMPPClientError.closed) }
        }
    }

    /// Ends the stream politely; the server then tells the member's contacts this resource is unavailable.
    package func logOff() {
        commands.yield(.close)
        commands.finish()
    }
}

/// Where a test's XMPP server listens.
package struct XMPPEndpoint: Sendable {
    package var domain: String
    package var port: Int
    package var caFile: String?

    package init(domain: String, port: Int, caFile: String? = nil) {
        self.domain = domain
        self.port = port
        self.caFile = caFile
    }
}
