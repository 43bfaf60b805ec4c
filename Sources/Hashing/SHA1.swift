internal import COpenSSL

/// SHA-1, one-shot, for the one protocol that still needs it: the WebSocket
/// handshake (RFC 6455 §4.2.2 derives `Sec-WebSocket-Accept` from the key
/// with it). Never use it for evidence: records use SHA-256.
public enum SHA1 {
    /// The size of a digest in bytes.
    public static let byteCount = 20

    /// The 20-byte digest of `bytes`.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: byteCount)
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBytes { input in
            digest.withUnsafeMutableBufferPointer { out in
                EVP_Digest(input.baseAddress, input.count, out.baseAddress, &length, EVP_sha1(), nil)
            }
        }
        precondition(ok == 1 && Int(length) == byteCount, "OpenSSL EVP_Digest(SHA-1) failed")
        return digest
    }
}
