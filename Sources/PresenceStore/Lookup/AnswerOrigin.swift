/// Where a lookup's answer came from (as Kingfisher's `CacheType`).
public enum AnswerOrigin: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// The storage held the user.
    case storage
    /// The origin server answered a probe; the answer is now stored too.
    case probe
    /// Nothing could be had: the answer is `lost` or `unknown`.
    case none

    public var description: String { rawValue }
}
