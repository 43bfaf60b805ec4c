/// A TLS alert description (RFC 8446 §6, RFC 5246 §7.2), named the way the
/// RFCs name it, with spaces instead of underscores ("certificate required").
public struct TLSAlert: Sendable, Hashable, CustomStringConvertible {
    /// The one-byte AlertDescription code.
    public let code: UInt8

    public init(code: UInt8) {
        self.code = code
    }

    public static let closeNotify = TLSAlert(code: 0)
    public static let unexpectedMessage = TLSAlert(code: 10)
    public static let badRecordMAC = TLSAlert(code: 20)
    public static let recordOverflow = TLSAlert(code: 22)
    public static let handshakeFailure = TLSAlert(code: 40)
    public static let badCertificate = TLSAlert(code: 42)
    public static let unsupportedCertificate = TLSAlert(code: 43)
    public static let certificateRevoked = TLSAlert(code: 44)
    public static let certificateExpired = TLSAlert(code: 45)
    public static let certificateUnknown = TLSAlert(code: 46)
    public static let illegalParameter = TLSAlert(code: 47)
    public static let unknownCA = TLSAlert(code: 48)
    public static let accessDenied = TLSAlert(code: 49)
    public static let decodeError = TLSAlert(code: 50)
    public static let decryptError = TLSAlert(code: 51)
    public static let protocolVersion = TLSAlert(code: 70)
    public static let insufficientSecurity = TLSAlert(code: 71)
    public static let internalError = TLSAlert(code: 80)
    public static let inappropriateFallback = TLSAlert(code: 86)
    public static let userCanceled = TLSAlert(code: 90)
    public static let missingExtension = TLSAlert(code: 109)
    public static let unsupportedExtension = TLSAlert(code: 110)
    public static let unrecognizedName = TLSAlert(code: 112)
    public static let badCertificateStatusResponse = TLSAlert(code: 113)
    public static let unknownPSKIdentity = TLSAlert(code: 115)
    public static let certificateRequired = TLSAlert(code: 116)
    public static let noApplicationProtocol = TLSAlert(code: 120)

    /// The RFC name with spaces, e.g. "unknown ca"; "alert 255" for a code no RFC names.
    public var name: String {
        switch code {
        case 0: "close notify"
        case 10: "unexpected message"
        case 20: "bad record mac"
        case 21: "decryption failed"
        case 22: "record overflow"
        case 30: "decompression failure"
        case 40: "handshake failure"
        case 41: "no certificate"
        case 42: "bad certificate"
        case 43: "unsupported certificate"
        case 44: "certificate revoked"
        case 45: "certificate expired"
        case 46: "certificate unknown"
        case 47: "illegal parameter"
        case 48: "unknown ca"
        case 49: "access denied"
        case 50: "decode error"
        case 51: "decrypt error"
        case 60: "export restriction"
        case 70: "protocol version"
        case 71: "insufficient security"
        case 80: "internal error"
        case 86: "inappropriate fallback"
        case 90: "user canceled"
        case 100: "no renegotiation"
        case 109: "missing extension"
        case 110: "unsupported extension"
        case 111: "certificate unobtainable"
        case 112: "unrecognized name"
        case 113: "bad certificate status response"
        case 114: "bad certificate hash value"
        case 115: "unknown psk identity"
        case 116: "certificate required"
        case 120: "no application protocol"
        default: "alert \(code)"
        }
    }

    public var description: String { name }
}
