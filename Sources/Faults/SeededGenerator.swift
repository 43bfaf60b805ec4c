/// xoshiro256** (Blackman and Vigna), seeded through SplitMix64: a small,
/// fast generator whose whole sequence follows from one 64-bit seed, so a
/// run with `--seed` draws the same values again. Not for secrets.
public struct SeededGenerator: RandomNumberGenerator, Sendable, Hashable {
    private var s0, s1, s2, s3: UInt64

    /// Expands `seed` with SplitMix64, as the xoshiro authors recommend (the state is never all zero).
    public init(seed: UInt64) {
        var sm = seed
        func splitMix() -> UInt64 {
            sm &+= 0x9E37_79B9_7F4A_7C15
            var z = sm
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s0 = splitMix(); s1 = splitMix(); s2 = splitMix(); s3 = splitMix()
    }

    public mutating func next() -> UInt64 {
        let result = rotl(s1 &* 5, 7) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = rotl(s3, 45)
        return result
    }

    /// A uniform value in [0, 1) with 53 bits of precision.
    public mutating func nextUnit() -> Double {
        Double(next() >> 11) * 0x1p-53
    }

    private func rotl(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }
}
