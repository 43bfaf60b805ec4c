internal import COpenSSL

/// The TLS protocol versions Intact speaks. TLS 1.2 is the floor.
public enum TLSVersion: String, Sendable, Hashable, Codable, CaseIterable {
    case tls1_2 = "TLSv1.2"
    case tls1_3 = "TLSv1.3"

    /// OpenSSL's protocol version constant (`TLS1_2_VERSION`, `TLS1_3_VERSION`).
    var openSSLValue: Int32 {
        switch self {
        case .tls1_2: TLS1_2_VERSION
        case .tls1_3: TLS1_3_VERSION
        }
    }
}
