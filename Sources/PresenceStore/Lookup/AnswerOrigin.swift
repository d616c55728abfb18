/// Where a lookup's answer came from (as Kingfisher's `CacheType`).
public enum AnswerOrigin: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// The storage held the user in memory.
    case storage
    /// The storage's disk tier held the user (``TieredStorage``): memory had dropped them, or never had them.
    case disk
    /// The origin server answered a probe; the answer is now stored too.
    case probe
    /// Nothing could be had: the answer is `lost` or `unknown`.
    case none

    public var description: String { rawValue }
}
