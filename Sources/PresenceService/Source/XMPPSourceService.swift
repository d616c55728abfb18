import PresenceSource
import ServiceLifecycle

/// The XMPP source as one of the service's lifecycle services: it runs until the graceful shutdown begins, then
/// stops reconnecting and lets the connection go.
struct XMPPSourceService: Service {
    let source: XMPPPresenceSource

    func run() async throws {
        await cancelWhenGracefulShutdown { await source.run() }
    }
}
