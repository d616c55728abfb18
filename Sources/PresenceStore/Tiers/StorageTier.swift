/// Which tier answered a lookup.
public enum StorageTier: String, Hashable, Sendable, CustomStringConvertible {
    case memory
    case disk

    public var description: String { rawValue }
}
