import Evidence
import HTTP
import TLS

/// The request's way: through the hooks, then upstream once the stream is there.
extension ExchangeFlow {
    /// Runs a request part from the client through the hooks and acts on what they say.
    mutating func passRequest(_ part: HTTPRequestPart, into commands: inout [ExchangeCommand]) {
        if case .discarding = requestLeg { return }
        for output in HookChain.run(part, through: hooks[...], { $0.request($1) }) {
            switch output {
            case .forward(let forwarded):
                emitRequest(forwarded, into: &commands)
            case .answer(let parts):
                answer(parts, into: &commands)
            case .fail(let reason):
                fail(ProxyError(.internal, at: "proxy hook on the request", reason, status: .proxyInternalError),
                     status: 502, into: &commands)
            case .reset(let reason):
                reset(ProxyError(.reset, at: "proxy hook on the request", reason, status: .connectionTerminated),
                      into: &commands)
            }
            if case .discarding = requestLeg { return }
        }
    }

    /// Sends a part the hooks passed on, or keeps it until the upstream
    /// stream is there; a head asks the pool for one.
    private mutating func emitRequest(_ part: HTTPRequestPart, into commands: inout [ExchangeCommand]) {
        switch requestLeg {
        case .waitingForUpstream(var pending):
            pending.append(part)
            requestLeg = .waitingForUpstream(pending: pending)
            guard case .none = upstream else { break }
            guard let target else {
                fail(ProxyError(.internal, at: "proxy", "the request has no upstream target",
                                status: .proxyConfigurationError), status: 502, into: &commands)
                break
            }
            upstream = .connecting
            commands.append(.openUpstream(target))
        case .forwarding:
            sendUpstream(part, into: &commands)
        case .sent, .discarding:
            break
        }
    }

    /// Sends one part on the open upstream stream and records it as sent.
    private mutating func sendUpstream(_ part: HTTPRequestPart, into commands: inout [ExchangeCommand]) {
        switch part {
        case .head(let head):
            guard let target else { return }
            commands.append(.sendRequest(.head(HopByHop.shapeRequest(head, for: target))))
        case .body(let chunk):
            recorder.upstream?.request.recordBody(chunk)
            commands.append(.sendRequest(part))
        case .end(let trailers):
            recorder.upstream?.request.recordEnd(trailers: trailers, at: clock())
            commands.append(.sendRequest(part))
            requestLeg = .sent
        }
    }

    /// The pool assigned a stream: send what waited, then forward as parts come.
    mutating func upstreamOpened(_ connection: ConnectionID, tls: TLSConnectionInfo?,
                                 into commands: inout [ExchangeCommand]) {
        guard case .connecting = upstream else {
            // Cancelled meanwhile (answered, or the client left): the connection is not needed.
            commands.append(.releaseUpstream(reusable: true))
            return
        }
        upstream = .open(connection)
        recorder.beginUpstream(connection: connection, tls: tls.map(TLSDetails.init))
        guard case .waitingForUpstream(let pending) = requestLeg else { return }
        requestLeg = .forwarding
        for part in pending {
            sendUpstream(part, into: &commands)
        }
    }

    /// The client's stream is gone: nothing more can reach it.
    mutating func clientLeft(_ problem: ProxyError, into commands: inout [ExchangeCommand]) {
        client = .gone
        let requestCut = !recorder.downstream.request.isEnded
        switch responseLeg {
        case .sent, .broken:
            // The response was complete; a late reset changes nothing but a cut upload.
            if requestCut { noteFailure(problem) }
        case .awaitingHead, .streaming:
            responseLeg = .broken
            noteFailure(problem)
        }
        if requestCut { requestLeg = .discarding }
        releaseUpstream(reusable: false, into: &commands)
    }

    /// The proxy answers the client with an error of its own (or resets the
    /// client's stream when a response head already went out).
    mutating func fail(_ problem: ProxyError, status: Int, into commands: inout [ExchangeCommand]) {
        noteFailure(problem)
        switch responseLeg {
        case .awaitingHead:
            answer(LocalResponse(status: status, error: problem).parts, into: &commands)
        case .streaming:
            reset(problem, into: &commands)
        case .sent, .broken:
            stopRequest()
            releaseUpstream(reusable: false, into: &commands)
        }
    }

    /// Answers the client with `parts` instead of the server; the upstream
    /// stream (if any) is abandoned and the rest of the request dropped.
    mutating func answer(_ parts: [HTTPResponsePart], into commands: inout [ExchangeCommand]) {
        stopRequest()
        releaseUpstream(reusable: false, into: &commands)
        guard case .awaitingHead = responseLeg, client == .connected else { return }
        for part in parts {
            sendToClient(part, into: &commands)
        }
        if case .streaming = responseLeg { sendToClient(.end(trailers: nil), into: &commands) }
    }

    /// Resets the client's stream and abandons the upstream one.
    mutating func reset(_ problem: ProxyError, into commands: inout [ExchangeCommand]) {
        noteFailure(problem)
        stopRequest()
        releaseUpstream(reusable: false, into: &commands)
        switch responseLeg {
        case .sent, .broken: break
        case .awaitingHead, .streaming: responseLeg = .broken
        }
        if client == .connected {
            client = .gone
            commands.append(.resetClientStream)
        }
    }

    /// Nothing more of the request goes upstream.
    private mutating func stopRequest() {
        switch requestLeg {
        case .sent: break
        case .waitingForUpstream, .forwarding, .discarding: requestLeg = .discarding
        }
    }
}
