import HTTP

/// How the sans-io connection layers' refusals and failures read as transport
/// errors: the HTTP/1.1 layers' first, then the HTTP/2 layer's. The one place
/// a layer's error becomes a `TransportError`; `ProxyError.transport(_:at:)`
/// is the one place a `TransportError` becomes a proxy's recorded failure.
extension TransportError {
    /// A call the layer refused: a serializer error as `.http1Serialize`, a
    /// call out of turn as `.invalidState` with the layer's sentence.
    init(_ error: HTTP1LayerError) {
        if case .serialize(let error) = error {
            self = .http1Serialize(error)
        } else {
            self = .invalidState(error.description)
        }
    }

    /// An exchange the layer ended before both of its messages were complete.
    init(_ failure: HTTP1ExchangeFailure) {
        switch failure {
        case .peerClosed(let message): self = .peerClosed(during: TransportStage(message))
        case .malformed(let error): self = .http1Parse(error)
        case .cancelled: self = .cancelled
        }
    }
}

extension TransportStage {
    init(_ message: HTTP1UnfinishedMessage) {
        switch message {
        case .request: self = .request
        case .response: self = .response
        case .responseOnReusedConnection: self = .responseOnReusedConnection
        }
    }
}

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
