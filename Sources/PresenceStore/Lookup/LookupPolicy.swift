/// What a lookup may do when the storage cannot answer: the trade between an evicting storage's misses and the
/// origin server's load, chosen per request (after URLCache's request cache policies and Kingfisher's options).
public enum LookupPolicy: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Answer from the storage only; a `lost` user stays `lost` (URLCache `returnCacheDataDontLoad`).
    case cacheOnly = "cache-only"
    /// Answer from the storage; a roster member it lost (or never had) is probed, stored and answered
    /// (URLCache `returnCacheDataElseLoad`). The default whenever a probing source is connected.
    case cacheElseProbe = "cache-else-probe"
    /// Always ask the server, store and answer (URLCache `reloadIgnoringLocalCacheData`).
    case probe

    public var description: String { rawValue }
}
