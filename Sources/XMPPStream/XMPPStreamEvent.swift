/// What the parser reports while a stream is fed to it, in input order.
public enum XMPPStreamEvent: Sendable {
    /// The stream header was read (or implied); always the first event.
    case streamOpened(StreamHeader)
    /// A complete top-level element. The value is only copied when the receiver keeps it.
    case stanza(Stanza)
    /// `</stream:stream>` was read (or, for an implicit stream, the input finished).
    case streamClosed
}
