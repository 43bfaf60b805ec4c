internal import COpenSSL
import Foundation
import Hashing

/// The CA certificate in the forms devices and tools install: what
/// `intact ca export` writes and the CA page serves. Every form holds the
/// certificate only, never a key.
public enum CAExportFormat: String, CaseIterable, Sendable {
    /// PEM text (`ca-cert.pem`): curl, Linux trust stores, Firefox.
    case pem
    /// DER (`.crt`): what Android's "Install certificate" takes; Windows too.
    case der
    /// PKCS#12 holding the certificate alone, no password: Windows and macOS importers.
    case p12
    /// An iOS/iPadOS/macOS configuration profile with one `com.apple.security.root` payload.
    case mobileconfig
    /// `<subject_hash_old>.0`, the PEM file Android's system store holds (rooted emulators).
    case androidSystem = "android-system"

    /// The MIME type a browser or phone acts on when it downloads the file.
    public var mediaType: String {
        switch self {
        case .pem: return "application/x-pem-file"
        case .der: return "application/x-x509-ca-cert"
        case .p12: return "application/x-pkcs12"
        case .mobileconfig: return "application/x-apple-aspen-config"
        case .androidSystem: return "application/octet-stream"
        }
    }
}

extension CertificateAuthority {
    /// The CA certificate's DER encoding.
    public var certificateDER: [UInt8] {
        // Encoding a parsed certificate fails only when allocation fails.
        (try? X509Codec.der(certificate: authority.certificate.pointer)) ?? []
    }

    /// Base64 of the SHA-256 of the CA certificate's SubjectPublicKeyInfo
    /// (the form of HPKP pins and Chromium's SPKI lists).
    public var certificateSPKIHash: String {
        Self.spkiHash(X509_get0_pubkey(authority.certificate.pointer))
    }

    /// The same hash of the one key every minted leaf certifies. Chromium's
    /// `--ignore-certificate-errors-spki-list` matches leaf keys, so this is
    /// the value that makes it accept Intact's certificates without trusting the CA.
    public var leafSPKIHash: String {
        Self.spkiHash(leafKey.pointer)
    }

    /// OpenSSL's `X509_subject_name_hash_old` of the CA certificate, eight
    /// lowercase hex digits: the name of the file in Android's system store.
    public var subjectHashOld: String {
        let hash = X509_subject_name_hash_old(authority.certificate.pointer)
        let digits = String(hash & 0xffff_ffff, radix: 16)
        return String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }

    /// The file name a format is saved as: `intact-ca.pem`, `intact-ca.crt`,
    /// `intact-ca.p12`, `intact-ca.mobileconfig`, `<subject_hash_old>.0`.
    public func exportFileName(_ format: CAExportFormat) -> String {
        switch format {
        case .pem: return "intact-ca.pem"
        case .der: return "intact-ca.crt"
        case .p12: return "intact-ca.p12"
        case .mobileconfig: return "intact-ca.mobileconfig"
        case .androidSystem: return "\(subjectHashOld).0"
        }
    }

    /// The CA certificate in `format`. Does no I/O.
    public func export(_ format: CAExportFormat) throws -> [UInt8] {
        switch format {
        case .pem, .androidSystem:
            return try X509Codec.pem(certificate: authority.certificate.pointer)
        case .der:
            return try X509Codec.der(certificate: authority.certificate.pointer)
        case .p12:
            return try certificateOnlyPKCS12()
        case .mobileconfig:
            return Array(configurationProfile().utf8)
        }
    }

    /// Writes an export to a new file (mode 0644: it holds no secret);
    /// refuses to overwrite one. Blocks on disk I/O.
    public static func writeExport(_ bytes: [UInt8], toFile path: String) throws {
        try CertificateFiles.writeNew(path, bytes, mode: 0o644)
    }

    /// A UUID made from the CA certificate and `purpose`: the same CA gives
    /// the same profile, so installing it again replaces rather than adds.
    /// (SHA-256 truncated to 128 bits, with the version 5 and RFC 4122 variant bits.)
    func stableUUID(_ purpose: String) -> String {
        var hasher = Hashing.SHA256()
        hasher.update(purpose)
        hasher.update(certificateDER)
        var bytes = Array(hasher.finalize().prefix(16))
        bytes[6] = (bytes[6] & 0x0f) | 0x50
        bytes[8] = (bytes[8] & 0x3f) | 0x80
        let hex = Encoding.hex(bytes).uppercased()
        let groups = [8, 4, 4, 4, 12]
        var parts: [String] = []
        var index = hex.startIndex
        for length in groups {
            let end = hex.index(index, offsetBy: length)
            parts.append(String(hex[index..<end]))
            index = end
        }
        return parts.joined(separator: "-")
    }

    /// The configuration profile: one root-certificate payload, stable UUIDs.
    private func configurationProfile() -> String {
        let name = Self.xmlEscaped(commonName)
        let payloadUUID = stableUUID("intact ca payload")
        let profileUUID = stableUUID("intact ca profile")
        let data = Data(certificateDER).base64EncodedString(options: [.lineLength76Characters, .endLineWithLineFeed])
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>PayloadContent</key>
            \t<array>
            \t\t<dict>
            \t\t\t<key>PayloadCertificateFileName</key>
            \t\t\t<string>intact-ca.cer</string>
            \t\t\t<key>PayloadContent</key>
            \t\t\t<data>
            \(data)
            \t\t\t</data>
            \t\t\t<key>PayloadDescription</key>
            \t\t\t<string>Adds Intact's development CA as a trusted root</string>
            \t\t\t<key>PayloadDisplayName</key>
            \t\t\t<string>\(name)</string>
            \t\t\t<key>PayloadIdentifier</key>
            \t\t\t<string>com.apple.security.root.\(payloadUUID)</string>
            \t\t\t<key>PayloadType</key>
            \t\t\t<string>com.apple.security.root</string>
            \t\t\t<key>PayloadUUID</key>
            \t\t\t<string>\(payloadUUID)</string>
            \t\t\t<key>PayloadVersion</key>
            \t\t\t<integer>1</integer>
            \t\t</dict>
            \t</array>
            \t<key>PayloadDescription</key>
            \t<string>Lets Intact, an intercepting test proxy, read this device's HTTPS traffic. Remove it after testing.</string>
            \t<key>PayloadDisplayName</key>
            \t<string>\(name)</string>
            \t<key>PayloadIdentifier</key>
            \t<string>dev.intact.ca.\(profileUUID)</string>
            \t<key>PayloadRemovalDisallowed</key>
            \t<false/>
            \t<key>PayloadType</key>
            \t<string>Configuration</string>
            \t<key>PayloadUUID</key>
            \t<string>\(profileUUID)</string>
            \t<key>PayloadVersion</key>
            \t<integer>1</integer>
            </dict>
            </plist>

            """
    }

    /// The CA certificate's common name ("Intact Development CA (host) day").
    public var commonName: String {
        subject.split(separator: ",").first { $0.hasPrefix("CN=") }.map { String($0.dropFirst(3)) } ?? subject
    }

    /// PKCS#12 with the certificate as a trusted certificate bag, no key, no password.
    private func certificateOnlyPKCS12() throws -> [UInt8] {
        CertificateError.clearOpenSSLErrors()
        guard let archive = PKCS12_create("", commonName, nil, authority.certificate.pointer, nil,
                                          -1, NID_aes_256_cbc, PKCS12_DEFAULT_ITER, PKCS12_DEFAULT_ITER, 0)
        else {
            throw CertificateError.openSSLFailure("create a PKCS#12 structure")
        }
        defer { PKCS12_free(archive) }
        return try X509Codec.collectBIO("encode PKCS#12") { i2d_PKCS12_bio($0, archive) == 1 }
    }

    private static func spkiHash(_ key: OpaquePointer?) -> String {
        guard let key else { return "" }
        let der = (try? X509Codec.collectBIO("encode a public key") { i2d_PUBKEY_bio($0, key) == 1 }) ?? []
        return Data(Hashing.SHA256.hash(der)).base64EncodedString()
    }

    private static func xmlEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
