internal import COpenSSL

/// Cryptographically secure random bytes from OpenSSL's DRBG.
public enum SecureRandom {
    /// Returns `count` random bytes. Traps if the generator fails, which
    /// OpenSSL documents only for an unseeded generator (never on Linux with getrandom).
    public static func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        guard count > 0 else { return out }
        let ok = out.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        precondition(ok == 1, "OpenSSL RAND_bytes failed")
        return out
    }
}
