import HTTP

/// How the HTTP/2 connection layer's refusals and stream failures read as transport errors.
extension TransportError {
    /// A call the layer refused: the session's refusal as `.http2Session`, a
    /// failed connection as `.http2Connection`, anything else as `.invalidState`.
    init(_ error: HTTP2LayerError) {
        switch error {
        case .session(let error): self = .http2Session(error)
        case .connectionFailed(let error): self = .http2Connection(error)
        case .extendedConnectNotAllowed(let name): self = .extendedConnectNotAllowed(protocol: name)
        case .goingAway, .streamOver: self = .invalidState(error.description)
        }
    }

    /// A stream the layer ended before both of its messages were complete.
    init(_ failure: HTTP2StreamFailure) {
        switch failure {
        case .reset(let reset): self = .streamReset(reset)
        case .notProcessed(let lastStreamID, let code): self = .goAway(lastStreamID: lastStreamID, code: code)
        case .connection(let error): self = .http2Connection(error)
        case .peerClosed: self = .peerClosed(during: .http2Streams)
        case .cancelled: self = .cancelled
        }
    }
}
