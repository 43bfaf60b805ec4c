internal import COpenSSL
import Foundation
import Synchronization

/// Intact's development certificate authority: an ECDSA P-256 CA that
/// mints a server certificate for any host the proxy intercepts, and client
/// certificates for tests.
///
/// On disk it is one directory (by default one per user, see
/// `defaultDirectory(environment:)`; mode 0700) holding
/// `ca-cert.pem` (0644), `ca-key.pem` (0600) and `leaf-key.pem` (0600, the
/// one P-256 key every minted server certificate shares, so a cold leaf
/// costs one signature and no key generation). Loading refuses a directory
/// or key file that group or others can access.
///
/// Creating and loading block on key generation and disk I/O: never call
/// them on a loop queue. Minting leaves (`leaf(for:)`) does no I/O and may be
/// called from any thread; see `CertificateAuthority+Leaves.swift`.
public final class CertificateAuthority: Sendable {
    /// File names inside the directory.
    public static let certificateFileName = "ca-cert.pem"
    public static let keyFileName = "ca-key.pem"
    public static let leafKeyFileName = "leaf-key.pem"
    /// Validity of a newly created CA certificate (a development CA; ten years).
    public static let validityDays = 3650
    /// How many minted leaf certificates are kept, by default.
    public static let defaultLeafCacheCapacity = 1000

    /// The directory, as given by the caller.
    public let directory: String
    /// `directory/ca-cert.pem`: the file to hand to `curl --cacert` or install on a device.
    public let certificatePath: String
    /// `directory/ca-key.pem`.
    public let keyPath: String
    /// `directory/leaf-key.pem`.
    public let leafKeyPath: String

    /// The CA certificate with the CA's private key.
    let authority: TLSIdentity
    /// The key every minted server certificate certifies.
    let leafKey: OwnedKey
    /// Minted server certificates by host, least recently used evicted first.
    let leafCache: Mutex<LRUCache<CertificateHost, TLSIdentity>>

    private init(directory: String, authority: TLSIdentity, leafKey: OwnedKey, leafCacheCapacity: Int) {
        self.directory = directory
        self.certificatePath = CertificateFiles.path(directory, Self.certificateFileName)
        self.keyPath = CertificateFiles.path(directory, Self.keyFileName)
        self.leafKeyPath = CertificateFiles.path(directory, Self.leafKeyFileName)
        self.authority = authority
        self.leafKey = leafKey
        self.leafCache = Mutex(LRUCache(capacity: max(1, leafCacheCapacity)))
    }

    /// Whether `directory` holds a CA certificate file (it may still fail to load).
    public static func exists(in directory: String) -> Bool {
        CertificateFiles.exists(CertificateFiles.path(directory, certificateFileName))
    }

    /// Creates a new CA in `directory`: generates the CA key, the shared
    /// leaf key and a self-signed CA certificate, and publishes the three
    /// files at once (see `CertificateFiles.publish`): a new or empty
    /// directory is built aside and renamed into place (mode 0700); a
    /// directory holding other files is filled under its lock. Throws
    /// `.alreadyExists` rather than overwrite a CA, also when another process
    /// created one meanwhile (`loadOrCreate` then loads that one).
    /// Blocks on key generation and disk I/O: never call on a loop queue.
    /// `commonName` names the CA certificate (default: "Intact Development CA
    /// (host) day"); a second CA a client trusts beside the first needs a
    /// name of its own, or a certificate without an authority key identifier
    /// (Squid mints such) is checked against the wrong one.
    public static func create(in directory: String, leafCacheCapacity: Int = defaultLeafCacheCapacity,
                              commonName: String? = nil) throws -> CertificateAuthority {
        let certificatePath = CertificateFiles.path(directory, certificateFileName)
        if CertificateFiles.exists(certificatePath) { throw CertificateError.alreadyExists(file: certificatePath) }
        let authorityKey = try X509Codec.generateP256Key()
        let authority: TLSIdentity
        do {
            let certificate = try selfSignedCertificate(key: authorityKey, commonName: commonName ?? Self.commonName())
            authority = TLSIdentity(certificate: certificate, chain: [], key: authorityKey)
        } catch {
            EVP_PKEY_free(authorityKey)
            throw error
        }
        let leafKey = OwnedKey(try X509Codec.generateP256Key())
        try CertificateFiles.publish([
            .init(name: leafKeyFileName, bytes: try X509Codec.pem(privateKey: leafKey.pointer), mode: 0o600),
            .init(name: keyFileName, bytes: try X509Codec.pem(privateKey: authority.privateKey.pointer), mode: 0o600),
            // Last: its presence is what marks the directory as holding a CA.
            .init(name: certificateFileName, bytes: try X509Codec.pem(certificate: authority.certificate.pointer),
                  mode: 0o644),
        ], in: directory)
        return CertificateAuthority(directory: directory, authority: authority, leafKey: leafKey,
                                    leafCacheCapacity: leafCacheCapacity)
    }

    /// Loads the CA in `directory`. Refuses a directory or key file that
    /// group or others can access, a half-written CA (a key without the
    /// certificate, or the reverse), a corrupt PEM file, a CA key that does
    /// not match the certificate, and a certificate without `CA:TRUE`; each
    /// error names the file and the fix. Waits while another process fills
    /// the directory in place (its lock).
    /// Blocks on disk I/O: never call on a loop queue.
    public static func load(from directory: String,
                            leafCacheCapacity: Int = defaultLeafCacheCapacity) throws -> CertificateAuthority {
        try CertificateFiles.checkPrivateDirectory(directory)
        try waitUntilComplete(directory)
        return try CertificateFiles.withDirectoryLock(directory, exclusive: false) {
            try checkComplete(directory)
            let certificatePath = CertificateFiles.path(directory, certificateFileName)
            let authority = try loadIdentity(certificateFile: certificatePath,
                                             keyFile: CertificateFiles.path(directory, keyFileName))
            guard X509Codec.isCertificateAuthority(authority.certificate.pointer) else {
                throw CertificateError.notACertificateAuthority(source: certificatePath)
            }
            let leafKeyPath = CertificateFiles.path(directory, leafKeyFileName)
            let leafKey = OwnedKey(try X509Codec.privateKey(pem: CertificateFiles.readPrivate(leafKeyPath),
                                                            source: leafKeyPath))
            return CertificateAuthority(directory: directory, authority: authority, leafKey: leafKey,
                                        leafCacheCapacity: leafCacheCapacity)
        }
    }

    /// Loads the CA in `directory`, or creates one when the directory holds
    /// none. Safe when several processes do it at once on one new directory:
    /// one creates, the others load what it made. `created` says which happened.
    /// Blocks on disk I/O and maybe key generation: never call on a loop queue.
    public static func loadOrCreate(in directory: String, leafCacheCapacity: Int = defaultLeafCacheCapacity,
                                    commonName: String? = nil) throws -> (authority: CertificateAuthority, created: Bool)
    {
        if !holdsAnyFile(directory) {
            do {
                return (try create(in: directory, leafCacheCapacity: leafCacheCapacity, commonName: commonName), true)
            } catch CertificateError.alreadyExists {
                // Another process made it first: use theirs.
            }
        }
        return (try load(from: directory, leafCacheCapacity: leafCacheCapacity), false)
    }

    /// Whether any of the three CA files is in `directory`.
    private static func holdsAnyFile(_ directory: String) -> Bool {
        [certificateFileName, keyFileName, leafKeyFileName].contains {
            CertificateFiles.exists(CertificateFiles.path(directory, $0))
        }
    }

    /// How long a half-made CA is waited for before it is reported as half-written.
    static let halfWrittenWait: Duration = .seconds(2)

    /// Returns once the directory holds all three files, or none, or
    /// `halfWrittenWait` passed (another process may be writing it).
    private static func waitUntilComplete(_ directory: String) throws {
        let deadline = ContinuousClock.now + halfWrittenWait
        while ContinuousClock.now < deadline {
            let present = [certificateFileName, keyFileName, leafKeyFileName].filter {
                CertificateFiles.exists(CertificateFiles.path(directory, $0))
            }
            if present.isEmpty || present.count == 3 { return }
            usleep(50_000)
        }
    }

    /// Throws `.incompleteAuthority` when some but not all three files are there.
    private static func checkComplete(_ directory: String) throws {
        let names = [certificateFileName, keyFileName, leafKeyFileName]
        let missing = names.filter { !CertificateFiles.exists(CertificateFiles.path(directory, $0)) }
        guard missing.isEmpty else {
            if missing.count == names.count {
                throw CertificateError.unreadable(file: CertificateFiles.path(directory, certificateFileName),
                                                  reason: "no development CA in \(directory)")
            }
            throw CertificateError.incompleteAuthority(directory: directory, missing: missing,
                                                       present: names.filter { !missing.contains($0) })
        }
    }

    // MARK: The CA certificate

    /// The CA certificate's subject, RFC 2253 form.
    public var subject: String { authority.subject }
    /// SHA-256 of the CA certificate, lowercase hex without colons.
    public var sha256Fingerprint: String { authority.sha256Fingerprint }
    /// The CA certificate in PEM form (the contents of `ca-cert.pem`).
    public var certificatePEM: String { authority.certificatePEM }
    /// Start of the CA certificate's validity.
    public var notBefore: Date { authority.notBefore }
    /// End of the CA certificate's validity; no certificate it mints outlives it.
    public var notAfter: Date { authority.notAfter }

    /// "Intact Development CA (host) 2025-11-29": names the machine and day,
    /// so a device trusting several development CAs can tell them apart.
    static func commonName(now: Date = Date()) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        let host = gethostname(&buffer, buffer.count) == 0
            ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            : "unknown host"
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        // A common name holds at most 64 characters; the fixed part takes 36.
        return "Intact Development CA (\(host.prefix(28))) \(formatter.string(from: now))"
    }

    private static func selfSignedCertificate(key: OpaquePointer, commonName: String) throws -> OpaquePointer {
        let builder = X509Builder(
            subject: [("O", "Intact"), ("CN", commonName)],
            extensions: [
                (NID_basic_constraints, "critical,CA:TRUE,pathlen:0"),
                (NID_key_usage, "critical,keyCertSign,cRLSign"),
                (NID_subject_key_identifier, "hash"),
                (NID_authority_key_identifier, "keyid:always"),
            ],
            validityDays: validityDays)
        return try builder.sign(publicKey: key, issuer: nil, issuerKey: key)
    }

    /// Owns one reference to an `EVP_PKEY` and frees it in `deinit`.
    /// `@unchecked Sendable`: the key is never mutated after creation, and
    /// OpenSSL 3 allows concurrent signing and up-referencing of one key.
    /// Reads the CA certificate and key with the CA's own checks: the key file
    /// must be private, and each error names its file. Blocks on disk I/O.
    private static func loadIdentity(certificateFile: String, keyFile: String) throws -> TLSIdentity {
        let certificates = try X509Codec.certificates(pem: CertificateFiles.read(certificateFile), source: certificateFile)
        do {
            let key = try X509Codec.privateKey(pem: CertificateFiles.readPrivate(keyFile), source: keyFile)
            CertificateError.clearOpenSSLErrors()
            guard X509_check_private_key(certificates[0], key) == 1 else {
                CertificateError.clearOpenSSLErrors()
                EVP_PKEY_free(key)
                throw CertificateError.keyMismatch(certificate: certificateFile, key: keyFile)
            }
            return TLSIdentity(certificate: certificates[0], chain: Array(certificates.dropFirst()), key: key)
        } catch {
            certificates.forEach { X509_free($0) }
            throw error
        }
    }

    final class OwnedKey: @unchecked Sendable {
        let pointer: OpaquePointer

        init(_ pointer: OpaquePointer) { self.pointer = pointer }

        /// A new reference for another owner (such as a minted `TLSIdentity`).
        func retained() -> OpaquePointer {
            EVP_PKEY_up_ref(pointer)
            return pointer
        }

        deinit { EVP_PKEY_free(pointer) }
    }
}
