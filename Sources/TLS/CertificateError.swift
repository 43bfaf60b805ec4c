internal import COpenSSL

/// Why a certificate, key, PKCS#12 file or CA directory could not be read,
/// written or made.
///
/// Every case names the file (or, for bytes that came from memory, a label
/// such as "certificate PEM") and the precise reason, so a user can act on
/// the message alone. `description` is that message, without a prefix.
public enum CertificateError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A file could not be opened or read (`reason` is the system's, e.g. "No such file or directory").
    case unreadable(file: String, reason: String)
    /// A file or directory could not be created or written.
    case unwritable(file: String, reason: String)
    /// A file that must not be overwritten already exists.
    case alreadyExists(file: String)
    /// A path that must be a directory is something else.
    case notADirectory(path: String)
    /// A private key file or CA directory is accessible by group or others.
    /// `mode` is the permission bits found; `fixMode` the ones to set.
    case insecurePermissions(path: String, mode: UInt32, fixMode: UInt32)
    /// The bytes hold no parseable PEM certificate; `reason` is OpenSSL's.
    case notPEMCertificate(source: String, reason: String)
    /// The bytes hold no parseable PEM private key; `reason` is OpenSSL's.
    case notPEMPrivateKey(source: String, reason: String)
    /// The private key does not belong to the certificate.
    case keyMismatch(certificate: String, key: String)
    /// A CA directory holds some of the CA's files but not all: a creation
    /// was interrupted, or a file was removed.
    case incompleteAuthority(directory: String, missing: [String], present: [String])
    /// A CA directory's certificate is not a CA certificate (no `CA:TRUE`).
    case notACertificateAuthority(source: String)
    /// The bytes are not a PKCS#12 (`.p12`/`.pfx`) structure.
    case notPKCS12(source: String, reason: String)
    /// A client certificate file that is neither PEM nor PKCS#12 (`IdentityFile`).
    case neitherPEMNorPKCS12(source: String)
    /// The PKCS#12 password is wrong (its integrity MAC does not verify).
    case wrongPassword(source: String)
    /// The PKCS#12 structure decoded and its password is right, but its
    /// contents cannot be decrypted (e.g. a legacy cipher) or hold no
    /// certificate with its matching key.
    case unusablePKCS12(source: String, reason: String)
    /// A leaf was asked for a name that is neither a host name nor an IP address.
    case invalidName(String, reason: String)
    /// A requested validity is out of range.
    case invalidValidity(days: Int, allowed: ClosedRange<Int>)
    /// An OpenSSL operation failed where no input was at fault.
    case openSSL(operation: String, reason: String)

    public var description: String {
        switch self {
        case let .unreadable(file, reason):
            return "cannot read \(file): \(reason)"
        case let .unwritable(file, reason):
            return "cannot write \(file): \(reason)"
        case let .alreadyExists(file):
            return "\(file) already exists; refusing to overwrite it"
        case let .notADirectory(path):
            return "\(path) is not a directory"
        case let .insecurePermissions(path, mode, fixMode):
            let what = mode & 0o044 != 0 ? "readable" : (mode & 0o022 != 0 ? "writable" : "accessible")
            return "\(path) is \(what) by group or others (mode \(Self.octal(mode))); run chmod \(Self.octal(fixMode).dropFirst()) \(path)"
        case let .notPEMCertificate(source, reason):
            return "\(source): not a PEM certificate (\(reason))"
        case let .notPEMPrivateKey(source, reason):
            return "\(source): not a PEM private key (\(reason))"
        case let .keyMismatch(certificate, key):
            return "\(key) is not the private key of the certificate in \(certificate): the files come from "
                + "different CAs; put back the matching key, or move the directory away so a new CA is made "
                + "(devices must then trust the new one)"
        case let .incompleteAuthority(directory, missing, present):
            let paths = present.map { CertificateFiles.path(directory, $0) }.joined(separator: ", ")
            return "\(directory) holds a half-written CA: \(missing.joined(separator: ", ")) missing next to "
                + "\(present.joined(separator: ", ")) (an interrupted creation?); remove \(paths) "
                + "and run again to make a new CA, or restore the missing file"
        case let .notACertificateAuthority(source):
            return "\(source): the certificate is not a CA certificate (no basicConstraints CA:TRUE)"
        case let .notPKCS12(source, reason):
            return "\(source): not a PKCS#12 file (\(reason))"
        case let .neitherPEMNorPKCS12(source):
            return "\(source): neither PEM (a certificate and its private key) nor PKCS#12"
        case let .wrongPassword(source):
            return "\(source): wrong password (the PKCS#12 integrity check failed)"
        case let .unusablePKCS12(source, reason):
            return "\(source): PKCS#12 contents unusable (\(reason))"
        case let .invalidName(name, reason):
            return "cannot issue a certificate for '\(name)': \(reason)"
        case let .invalidValidity(days, allowed):
            return "validity of \(days) days is out of range (\(allowed.lowerBound)...\(allowed.upperBound))"
        case let .openSSL(operation, reason):
            return "OpenSSL failed to \(operation) (\(reason))"
        }
    }

    /// Four-digit octal, as `ls -l` users read permission bits ("0644").
    private static func octal(_ mode: UInt32) -> String {
        let digits = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

// MARK: - OpenSSL's error queue

extension CertificateError {
    /// Empties this thread's OpenSSL error queue; called before every
    /// OpenSSL call whose failure is reported, so stale errors never leak into a message.
    static func clearOpenSSLErrors() {
        ERR_clear_error()
    }

    /// Drains this thread's OpenSSL error queue into a short reason: the
    /// distinct reason strings, oldest first, joined by "; ".
    /// `fallback` is used when the queue is empty.
    static func drainOpenSSLReason(fallback: String = "no detail from OpenSSL") -> String {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            let text: String
            if let reason = ERR_reason_error_string(code) {
                text = String(cString: reason)
            } else {
                text = "error 0x" + String(code, radix: 16)
            }
            if !reasons.contains(text) { reasons.append(text) }
        }
        return reasons.isEmpty ? fallback : reasons.joined(separator: "; ")
    }

    /// An `.openSSL` error for `operation`, with the drained error queue as reason.
    static func openSSLFailure(_ operation: String) -> CertificateError {
        .openSSL(operation: operation, reason: drainOpenSSLReason())
    }
}
