import HTTP
import TLS

/// Which HTTP version a connection speaks once its channel is established.
public enum HTTPProtocolChoice: Hashable, Sendable {
    /// Follow ALPN: `h2` is HTTP/2; `http/1.1`, `http/1.0` or no ALPN
    /// (plaintext included) is HTTP/1.x (the request line says which; an
    /// HTTP/1.0 request gets HTTP/1.0 framing); anything else fails with
    /// `.unsupportedProtocol`.
    case negotiated
    /// HTTP/1.1 whatever ALPN said.
    case http1
    /// HTTP/2 whatever ALPN said (over plaintext: "prior knowledge" h2c).
    case http2

    /// The version to speak on a channel whose handshake settled `tls`.
    func version(for tls: TLSConnectionInfo?) -> Result<HTTPVersion, TransportError> {
        switch self {
        case .http1: return .success(.http1_1)
        case .http2: return .success(.http2)
        case .negotiated:
            switch tls?.alpn {
            case nil, "http/1.1", "http/1.0": return .success(.http1_1)
            case "h2": return .success(.http2)
            case let other?: return .failure(.unsupportedProtocol(other))
            }
        }
    }

    /// The ALPN list a TLS client or server should offer for this choice.
    public var alpnProtocols: [String] {
        switch self {
        case .negotiated: return ["h2", "http/1.1"]
        case .http1: return ["http/1.1"]
        case .http2: return ["h2"]
        }
    }
}
