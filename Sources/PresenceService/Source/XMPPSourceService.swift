import PresenceSource
import ServiceLifecycle

/// The XMPP source as one of the service's lifecycle services: it runs until the graceful shutdown begins, then
/// stops reconnecting and lets the connection go. A source that stops on its own (another client replaced its
/// session) leaves the rest of the service running: it answers from what it has, and says it is not ready.
struct XMPPSourceService: Service {
    let source: XMPPPresenceSource

    func run() async throws {
        await cancelWhenGracefulShutdown { await source.run() }
        try? await gracefulShutdown()
    }
}
