import HTTP

/// How the HTTP/1.1 connection layers' refusals and failures read as transport errors.
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
