/// The TLS protocol versions Intact speaks. TLS 1.2 is the floor.
public enum TLSVersion: String, Sendable, Hashable, Codable, CaseIterable {
    case tls1_2 = "TLSv1.2"
    case tls1_3 = "TLSv1.3"
}
