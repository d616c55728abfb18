/// A small, fast, seedable generator: the same seed gives the same stream on every platform and Swift version
/// (unlike `SystemRandomNumberGenerator`, and unlike relying on `Int.random(in:using:)` internals).
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `0 ..< bound`, by multiply-shift (platform-independent, unlike the standard library's).
    public mutating func below(_ bound: Int) -> Int {
        precondition(bound > 0)
        return Int((UInt128(next()) * UInt128(bound)) >> 64)
    }

    /// A value in `0 ..< 1`.
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1p-53 }

    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool { unit() < p }

    /// One of `elements`.
    public mutating func pick<T>(_ elements: [T]) -> T { elements[below(elements.count)] }
}
