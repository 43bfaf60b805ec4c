import Hashing

/// Proof Key for Code Exchange (RFC 7636) with the S256 method, as step 5
/// of the flow uses it.
public enum PKCE {
    /// A fresh verifier: 32 random bytes, base64url without padding (43 characters).
    public static func makeVerifier() -> String {
        Encoding.base64URL(SecureRandom.bytes(32))
    }

    /// The S256 challenge of a verifier: base64url(SHA-256(ASCII(verifier))), no padding.
    public static func challenge(for verifier: String) -> String {
        Encoding.base64URL(SHA256.hash(Array(verifier.utf8)))
    }

    /// True for exactly 43 characters of `A-Z a-z 0-9 _ -` (an S256 challenge's shape).
    public static func isWellFormedChallenge(_ challenge: String) -> Bool {
        challenge.utf8.count == 43 && challenge.utf8.allSatisfy(isBase64URLByte)
    }

    /// True for 43–128 unreserved characters (RFC 7636 §4.1).
    public static func isWellFormedVerifier(_ verifier: String) -> Bool {
        (43...128).contains(verifier.utf8.count)
            && verifier.utf8.allSatisfy { isBase64URLByte($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "~") }
    }

    /// True when `verifier` is well formed and its S256 challenge equals `challenge`.
    public static func verify(verifier: String, against challenge: String) -> Bool {
        isWellFormedVerifier(verifier) && self.challenge(for: verifier) == challenge
    }

    private static func isBase64URLByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }
}
