import Logging
import NIOCore
import PresenceIngest
import PresenceStore
import XMPPStream

/// One feeder's connection read to its end: each read parsed and applied, the XEP-0114 handshake answered, a
/// stream error answered before the connection ends, and the stream finished once the feeder closes its side.
///
/// Where a read is parsed: a small one (at most ``parsedOnLoopUpTo`` bytes, what a live feeder sends at a time)
/// on the connection's event loop, where it arrives, and applied there too, when nothing of the feeder's waits in
/// the apply pool and the storage applies in memory (``MemoryStorage/appliesInMemory``). No other thread is woken
/// for it, and the changes it makes are marked on the streams of that loop from inside it: on two cores, handing a
/// few stanzas to another thread cost more than parsing them. A big read (a feeder sending flat out) is parsed on
/// Swift's global pool, so that the event loops keep answering queries meanwhile. The task stays on one or the
/// other while its reads keep their size: it changes thread once per change of pace, not once per read.
///
/// Used by the one task that reads the connection.
struct FeederConnection {
    let connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>
    let session: IngestSession
    /// The handshake the feeder must complete before anything it sends is applied; nil without a feed secret.
    let handshake: ComponentHandshake?
    let statistics: ServiceStatistics
    let logger: Logger

    /// How many bytes are parsed on the global pool before the task yields to others (queries above all).
    static let sliceBytes = 16 * 1024

    /// A read of at most this many bytes may be parsed and applied on the connection's event loop. At most
    /// ``sliceBytes``: such a read is one slice.
    static let parsedOnLoopUpTo = 4 * 1024

    /// Reads the connection until the feeder closes it, the stream ends in an error, or the connection fails.
    func run() async {
        let loop = EventLoopTaskExecutor(connection.channel.eventLoop)
        do {
            try await connection.executeThenClose { inbound, _ in
                var reads = inbound.makeAsyncIterator()
                var end = try await reads.next().map(RunEnd.read) ?? .closed
                while case .read(let first) = end {
                    let onLoop = parsesOnLoop(first)
                    end = try await withTaskExecutorPreference(onLoop ? loop : globalConcurrentExecutor) {
                        var buffer = first
                        while try await consume(buffer, onLoop: onLoop) {
                            guard let following = try await reads.next() else { return .closed }
                            guard parsesOnLoop(following) == onLoop else { return .read(following) }
                            buffer = following
                        }
                        return .ended
                    }
                }
                guard case .closed = end else { return }
                // Waiting for the pool is done off the event loop.
                await withTaskExecutorPreference(globalConcurrentExecutor) { await finish() }
            }
        } catch {
            logger.debug("feeder connection error", metadata: ["error": "\(error)"])
        }
    }

    private func parsesOnLoop(_ read: ByteBuffer) -> Bool {
        read.readableBytes <= Self.parsedOnLoopUpTo && session.storage.appliesInMemory && session.isApplied
    }

    /// Parses and applies one read; false once the stream is over (an error answered, or a refused handshake).
    private func consume(_ read: ByteBuffer, onLoop: Bool) async throws -> Bool {
        // In slices, yielding between them: feeders share the global pool with the query API, and a busy feeder
        // must not hold a thread for a whole 64 KiB read while queries wait.
        var remaining = read
        while let slice = remaining.readSlice(length: min(remaining.readableBytes, Self.sliceBytes)) {
            // On the loop, nothing of the feeder's is in the pool: there is room, and nothing to wait for.
            if !onLoop { await session.readyForInput() }
            let failure = slice.withUnsafeReadableBytes { bytes -> XMPPStreamError? in
                do throws(XMPPStreamError) {
                    try session.feed(bytes, applyingHere: onLoop)
                    return nil
                } catch {
                    return error
                }
            }
            if let handshake {
                let answer = handshake.takeOutput()
                if !answer.isEmpty {
                    try await connection.channel.writeAndFlush(ByteBuffer(bytes: answer)).get()
                }
            }
            if let failure {
                try await endStream(
                    with: failure, streamOpen: handshake.map { $0.state != .awaitingHeader } ?? false)
                return false
            }
            if case .refused(let reason) = handshake?.state {
                try await refuseUnauthorized(reason: reason)
                return false
            }
            if !onLoop { await Task.yield() }
            if remaining.readableBytes == 0 { break }
        }
        return true
    }

    /// The feeder closed its side: everything it sent is applied, and a stanza it left unfinished is reported.
    private func finish() async {
        await session.applied()  // then `finish` waits for at most its last batch
        var failure: XMPPStreamError?
        do throws(XMPPStreamError) { try session.finish() } catch { failure = error }
        if let failure {
            // The feeder went away inside a stanza: nothing to answer, everything before it is applied.
            statistics.streamErrorOccurred()
            logger.warning(
                "feeder stream cut",
                metadata: ["condition": "\(failure.condition.rawValue)", "error": "\(failure.message)"])
        }
    }

    /// Ends a stream after a parse error; `streamOpen`: the service's stream header was already sent.
    private func endStream(with error: XMPPStreamError, streamOpen: Bool) async throws {
        statistics.streamErrorOccurred()
        logger.warning(
            "feeder stream error",
            metadata: [
                "condition": "\(error.condition.rawValue)", "line": "\(error.position.line)",
                "column": "\(error.position.column)",
                "error": "\(error.message)",
            ])
        var writer = XMPPWriter()
        if !streamOpen { writer.openStream() }
        writer.streamError(for: error)
        writer.closeStream()
        try await connection.channel.writeAndFlush(ByteBuffer(bytes: writer.bytes)).get()
    }

    /// Ends the stream of a feeder that did not prove the feed secret (XEP-0114): `not-authorized`, no detail.
    private func refuseUnauthorized(reason: String) async throws {
        statistics.streamErrorOccurred()
        logger.warning("feeder not authorized", metadata: ["reason": "\(reason)"])
        var writer = XMPPWriter()
        writer.streamError("not-authorized")  // RFC 6120 §4.9.3.12
        writer.closeStream()
        try await connection.channel.writeAndFlush(ByteBuffer(bytes: writer.bytes)).get()
    }
}

/// How a run of a feeder's reads of one size ended.
private enum RunEnd {
    /// A read of the other size, to be parsed where reads of that size are.
    case read(ByteBuffer)
    /// The feeder closed its side: the stream is finished once everything it sent is applied.
    case closed
    /// The stream is over: an error was answered, or the handshake refused.
    case ended
}
