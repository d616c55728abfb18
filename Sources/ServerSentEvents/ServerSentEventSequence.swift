import NIOCore

/// The events of a Server-Sent Events stream, read from a body that arrives as buffers: the body of an
/// async-http-client response, or any other `AsyncSequence` of `ByteBuffer`.
///
/// It ends when the body ends (an event cut short by the end is dropped, as the WHATWG definition says) and
/// throws what the body throws: a dropped connection, a read timeout.
public struct ServerSentEventSequence<Base: AsyncSequence>: AsyncSequence where Base.Element == ByteBuffer {
    public typealias Element = ServerSentEvent

    private let base: Base
    private let maximumEventBytes: Int

    /// The events of `base`; one over `maximumEventBytes` ends the sequence with
    /// ``ServerSentEventParser/EventTooLarge``.
    public init(_ base: Base, maximumEventBytes: Int = ServerSentEventParser.defaultMaximumEventBytes) {
        self.base = base
        self.maximumEventBytes = maximumEventBytes
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), maximumEventBytes: maximumEventBytes)
    }

    /// Reads the body a buffer at a time and hands out the events each buffer completes, in order.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private var base: Base.AsyncIterator
        private var parser: ServerSentEventParser
        private var ready: [ServerSentEvent] = []
        private var readyIndex = 0

        init(base: Base.AsyncIterator, maximumEventBytes: Int) {
            self.base = base
            parser = ServerSentEventParser(maximumEventBytes: maximumEventBytes)
        }

        /// The stream's reconnection time (`retry:`), once it has sent one.
        public var retry: Duration? { parser.retry }

        public mutating func next() async throws -> ServerSentEvent? {
            while readyIndex == ready.count {
                guard let buffer = try await base.next() else { return nil }
                ready = try parser.parse(buffer.readableBytesView)
                readyIndex = 0
            }
            defer { readyIndex += 1 }
            return ready[readyIndex]
        }
    }
}

extension AsyncSequence where Element == ByteBuffer {
    /// This body read as a Server-Sent Events stream.
    public var serverSentEvents: ServerSentEventSequence<Self> { ServerSentEventSequence(self) }

    /// This body read as a Server-Sent Events stream whose events are at most `maximumEventBytes`.
    public func serverSentEvents(maximumEventBytes: Int) -> ServerSentEventSequence<Self> {
        ServerSentEventSequence(self, maximumEventBytes: maximumEventBytes)
    }
}
