import PresenceStore
import XMPPStream

/// One incoming stream of presence stanzas: parses bytes as they arrive, decodes each stanza, counts what it
/// saw and hands every presence update to the caller to apply.
///
/// The feed does not know where updates go; the caller applies them to a map or a storage, typically with
/// ``UserPresence/apply(_:receivedAt:)``. A stream error ends the feed: updates handed out before it stay
/// applied, and ``statistics`` still counts them.
public struct PresenceFeed: ~Copyable {
    private let parser: XMPPStreamParser
    private let decoder: PresenceDecoder
    public private(set) var statistics = IngestStatistics()
    /// The error that ended the stream, if any.
    public var error: XMPPStreamError? { parser.error }
    /// The stream header, once read.
    public var header: StreamHeader? { parser.header }

    public init(
        configuration: XMPPStreamParser.Configuration = XMPPStreamParser.Configuration(),
        decoder: PresenceDecoder = PresenceDecoder()
    ) {
        parser = XMPPStreamParser(configuration: configuration)
        self.decoder = decoder
    }

    /// Parses the next chunk, calling `apply` for each presence update it completes, in stream order.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer, apply: (PresenceUpdate) -> Void) throws(XMPPStreamError)
    {
        try feed(bytes, onEvent: { _ in }, apply: apply)
    }

    /// Parses the next chunk, calling `onEvent` for every parser event (the header, every stanza whatever it
    /// is, the end) and then `apply` for each presence update, in stream order.
    ///
    /// A stanza `admits` refuses is counted as read and not decoded.
    public mutating func feed(
        _ bytes: UnsafeRawBufferPointer, onEvent: (XMPPStreamEvent) -> Void, admits: (Stanza) -> Bool = { _ in true },
        apply: (PresenceUpdate) -> Void
    ) throws(XMPPStreamError) {
        statistics.bytes += bytes.count
        var statistics = self.statistics
        defer { self.statistics = statistics }
        try parser.feed(bytes) { event in
            onEvent(event)
            PresenceFeed.handle(event, decoder: decoder, admits: admits, statistics: &statistics, apply: apply)
        }
    }

    /// Parses the next chunk, calling `apply` for each presence update it completes, in stream order.
    public mutating func feed(_ bytes: some Sequence<UInt8>, apply: (PresenceUpdate) -> Void) throws(XMPPStreamError) {
        let array = Array(bytes)
        try array.withUnsafeBytes { buffer in
            Result { () throws(XMPPStreamError) in try feed(buffer, apply: apply) }
        }.get()
    }

    /// Parses the next chunk without decoding: `onEvent` gets every parser event, `onStanza` every complete stanza,
    /// in stream order, for ``decode(_:with:counting:apply:)`` elsewhere (a replay decodes on a second thread).
    /// Counts bytes and stanzas; each stanza's outcome is counted where it is decoded.
    public mutating func parse(
        _ bytes: UnsafeRawBufferPointer, onEvent: (XMPPStreamEvent) -> Void, onStanza: (Stanza) -> Void
    ) throws(XMPPStreamError) {
        statistics.bytes += bytes.count
        var stanzas = 0
        defer { statistics.stanzas += stanzas }
        try parser.feed(bytes) { event in
            onEvent(event)
            if case .stanza(let stanza) = event {
                stanzas += 1
                onStanza(stanza)
            }
        }
    }

    /// Ends the input of ``parse(_:onEvent:onStanza:)``.
    public mutating func finishParsing(
        onEvent: (XMPPStreamEvent) -> Void, onStanza: (Stanza) -> Void
    )
        throws(XMPPStreamError)
    {
        var stanzas = 0
        defer { statistics.stanzas += stanzas }
        try parser.finish { event in
            onEvent(event)
            if case .stanza(let stanza) = event {
                stanzas += 1
                onStanza(stanza)
            }
        }
    }

    /// Gives back a stanza ``parse(_:onEvent:onStanza:)`` handed out, once decoded (see
    /// ``XMPPStreamParser/recycle(_:)``).
    public func recycle(_ stanza: consuming Stanza) {
        parser.recycle(stanza)
    }

    /// Decodes a stanza handed out by ``parse(_:onEvent:onStanza:)``, counting its outcome (not the stanza: the
    /// parse counted it) in `outcomes`, and calls `apply` when it is a presence update.
    public static func decode(
        _ stanza: Stanza, with decoder: PresenceDecoder, counting outcomes: inout IngestStatistics,
        apply: (PresenceUpdate) -> Void
    ) {
        countOutcome(decoder.decode(stanza), in: &outcomes, apply: apply)
    }

    /// Ends the input (see ``XMPPStreamParser/finish(_:)``).
    public mutating func finish(apply: (PresenceUpdate) -> Void) throws(XMPPStreamError) {
        try finish(onEvent: { _ in }, apply: apply)
    }

    /// Ends the input, calling `onEvent` for every parser event and `apply` for each presence update.
    public mutating func finish(
        onEvent: (XMPPStreamEvent) -> Void, admits: (Stanza) -> Bool = { _ in true }, apply: (PresenceUpdate) -> Void
    ) throws(XMPPStreamError) {
        var statistics = self.statistics
        defer { self.statistics = statistics }
        try parser.finish { event in
            onEvent(event)
            PresenceFeed.handle(event, decoder: decoder, admits: admits, statistics: &statistics, apply: apply)
        }
    }

    /// Decodes a stanza that was parsed elsewhere (a client connection reads its own stream), counting it like
    /// every other, and calls `apply` when it is a presence update.
    @discardableResult
    public mutating func receive(_ stanza: Stanza, apply: (PresenceUpdate) -> Void) -> StanzaDisposition {
        let disposition = decoder.decode(stanza)
        PresenceFeed.count(disposition, in: &statistics, apply: apply)
        return disposition
    }

    private static func handle(
        _ event: XMPPStreamEvent, decoder: PresenceDecoder, admits: (Stanza) -> Bool,
        statistics: inout IngestStatistics, apply: (PresenceUpdate) -> Void
    ) {
        guard case .stanza(let stanza) = event else { return }
        guard admits(stanza) else {
            statistics.stanzas += 1
            return
        }
        count(decoder.decode(stanza), in: &statistics, apply: apply)
    }

    private static func count(
        _ disposition: StanzaDisposition, in statistics: inout IngestStatistics, apply: (PresenceUpdate) -> Void
    ) {
        statistics.stanzas += 1
        countOutcome(disposition, in: &statistics, apply: apply)
    }

    private static func countOutcome(
        _ disposition: StanzaDisposition, in statistics: inout IngestStatistics, apply: (PresenceUpdate) -> Void
    ) {
        switch disposition {
        case .update(let update):
            statistics.presenceUpdates += 1
            apply(update)
        case .ignored(let reason):
            statistics.ignored[reason, default: 0] += 1
        case .rejected(let reason):
            statistics.rejected[reason, default: 0] += 1
        }
    }
}
