import Hummingbird

/// The query API's request context: Hummingbird's basic one, under the service's own name so that its routes and
/// responder say whose requests they take.
public struct ServiceRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }
}
