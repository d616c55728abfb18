import PresenceStore
import XMPPStream

/// One feeder's stream: parses its bytes as they arrive and applies each presence update to the storage as
/// soon as its stanza is complete. Lives in the task that serves the connection.
final class FeedSession {
    private var feed: PresenceFeed
    private let storage: any MemoryStorage
    private let statistics: ServiceStatistics
    private var counted = IngestStatistics()

    init(configuration: ServiceConfiguration, storage: any MemoryStorage, statistics: ServiceStatistics) {
        feed = PresenceFeed(configuration: configuration.stream, decoder: configuration.decoder)
        self.storage = storage
        self.statistics = statistics
    }

    /// Applies a chunk; returns the stream error that ended the stream, if any.
    func feed(_ bytes: UnsafeRawBufferPointer) -> XMPPStreamError? {
        let storage = self.storage
        defer { publish() }
        do throws(XMPPStreamError) {
            try feed.feed(bytes) { storage.apply($0, receivedAt: PresenceTime.now()) }
            return nil
        } catch {
            return error
        }
    }

    /// The connection ended: a stream cut inside a stanza is an error (everything before it stays applied).
    func finish() -> XMPPStreamError? {
        let storage = self.storage
        defer { publish() }
        do throws(XMPPStreamError) {
            try feed.finish { storage.apply($0, receivedAt: PresenceTime.now()) }
            return nil
        } catch {
            return error
        }
    }

    /// Adds what happened since the last call to the service's counters.
    private func publish() {
        let now = feed.statistics
        statistics.record(
            stanzas: now.stanzas - counted.stanzas, updates: now.presenceUpdates - counted.presenceUpdates,
            ignored: now.ignoredTotal - counted.ignoredTotal, rejected: now.rejectedTotal - counted.rejectedTotal)
        counted = now
    }
}
