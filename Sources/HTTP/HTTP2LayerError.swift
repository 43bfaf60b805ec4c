/// A call an `HTTP2ConnectionLayer` cannot take now. `description` is the
/// sentence the transport reports for it.
public enum HTTP2LayerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The session refused the call.
    case session(HTTP2SessionError)
    /// The connection failed earlier; nothing more goes out.
    case connectionFailed(HTTP2ConnectionError)
    /// Client: GOAWAY was received or sent, or the owner stopped the
    /// connection: no new stream opens.
    case goingAway
    /// Client: the server's SETTINGS did not enable RFC 8441 extended CONNECT.
    case extendedConnectNotAllowed(protocol: String)
    /// The stream is not open in the layer (it ended, failed or was reset).
    case streamOver(HTTP2StreamID)

    public var description: String {
        switch self {
        case .session(let error): return error.description
        case .connectionFailed(let error): return error.description
        case .goingAway: return "the HTTP/2 connection is going away"
        case .extendedConnectNotAllowed(let name): return "the server does not allow extended CONNECT (\(name))"
        case .streamOver(let id): return "stream \(id) is over"
        }
    }
}
