/// A call an HTTP/1.1 connection layer cannot take in its current state, or
/// a message the serializer refused. `description` is the sentence the
/// transport reports for it.
public enum HTTP1LayerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The message could not be written as asked (framing conflict, body
    /// longer than Content-Length, invalid field).
    case serialize(HTTP1SerializerError)
    /// No exchange is in progress (it finished, failed, or the connection closed).
    case exchangeOver
    /// Server: a second final response head for the same request.
    case finalHeadAlreadySent
    /// Server: the end of a response whose final head was not sent.
    case responseEndBeforeHead
    /// Server: a tunnel was asked for but no response opened one.
    case noTunnelResponse
    /// Server: the request did not ask for a tunnel, or it is incomplete.
    case tunnelNotRequested
    /// Client: the connection takes no further request.
    case connectionClosing
    /// Client: a request is in flight already.
    case connectionBusy
    /// Client: the server did not switch protocols.
    case noSwitchingProtocols

    public var description: String {
        switch self {
        case .serialize(let error): return "\(error)"
        case .exchangeOver: return "the exchange is over"
        case .finalHeadAlreadySent: return "the final response head was already sent"
        case .responseEndBeforeHead: return "response end before the response head"
        case .noTunnelResponse: return "no tunnel-opening response (2xx to CONNECT, 101) was sent"
        case .tunnelNotRequested: return "the request did not ask for a tunnel, or it is incomplete"
        case .connectionClosing: return "the HTTP/1.1 connection is closing"
        case .connectionBusy: return "the HTTP/1.1 connection is busy"
        case .noSwitchingProtocols: return "no 101 Switching Protocols was received"
        }
    }
}
