import Hummingbird
import NIOCore

/// The query API's request context: Hummingbird's basic one, plus the connection, so that a change stream whose
/// reader stopped reading can be closed from outside its blocked write.
public struct ServiceRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}
