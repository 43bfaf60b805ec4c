import Evidence
import HTTP
import TLS

/// The request's way: through the hooks, then upstream once the stream is there.
extension ExchangeFlow {
    /// Runs a request part from the client through the hooks and acts on what they say.
    mutating func passRequest(_ part: HTTPRequestPart, _ io: any ExchangeActions) {
        if case .discarding = requestLeg { return }
        if hooksOnlyWatch, !requestPacer.isHolding {
            // What the chain and the pacer would do with the lone `.forward(part)` it makes, without them.
            for hook in hooks { hook.watchRequest(part) }
            return emitRequest(part, io)
        }
        requestPacer.hold(HookChain.run(part, through: hooks[...], { $0.request($1) }))
        releaseRequest(io)
    }

    /// Carries out the request's held hook outputs in order, until one
    /// waits for the timer or nothing more goes upstream.
    mutating func releaseRequest(_ io: any ExchangeActions) {
        while true {
            if case .discarding = requestLeg { return requestPacer.discard() }
            guard let step = requestPacer.next() else { return }
            if let output = step.output, let forwarded = act(on: output, leg: .request, io) {
                emitRequest(forwarded, io)
            }
            if let wait = step.wait { io.perform(.startTimer(.request, after: wait), for: id) }
        }
    }

    /// Carries out a hook output other than `.forward`; returns the part a
    /// `.forward` passes on. `leg` names the message in recorded failures.
    mutating func act<Part>(on output: HookOutput<Part>, leg: ProxyError.Place.Message, _ io: any ExchangeActions) -> Part? {
        let location = ProxyError.Place.hook(on: leg)
        switch output {
        case .forward(let part):
            return part
        case .answer(let parts):
            answer(parts, io)
        case .fail(let reason):
            fail(ProxyError(.internal, at: location, reason, status: .proxyInternalError), status: 502, io)
        case .reset(let reason):
            reset(ProxyError(.reset, at: location, reason, status: .connectionTerminated), io)
        case .close(let reason):
            closeClient(ProxyError(.closedEarly, at: location, reason, status: .connectionTerminated), io)
        case .stall(let reason):
            stall(ProxyError(.timeout, at: location, reason, status: .connectionTimeout), io)
        case .delay, .throttle:
            break // The message's pacer carries these out before outputs get here.
        }
        return nil
    }

    /// Sends a part the hooks passed on, or keeps it until the upstream
    /// stream is open; the head opens one.
    private mutating func emitRequest(_ part: HTTPRequestPart, _ io: any ExchangeActions) {
        switch (requestLeg, part) {
        case (.awaitingHead, .head(let head)):
            guard let target else {
                fail(ProxyError(.internal, at: .proxy, "the request has no upstream target",
                                status: .proxyConfigurationError), status: 502, io)
                return
            }
            let shaped = HopByHop.shapeRequest(head, for: target, supplyingAuthority: suppliesAuthority)
            // An extended CONNECT's stream carries the tunnel's bytes once the upstream accepted it.
            let framing = shaped.isExtendedConnect ? .tunnel : UpstreamFraming.framing(of: shaped, clientFraming: clientFraming)
            upstream = .opening
            requestLeg = .opening(pending: [], bodyless: !framing.allowsBody && framing != .tunnel)
            replay.opening(target, head: shaped, framing: framing)
            io.perform(.openUpstream(target, head: shaped, framing: framing), for: id)
        case (.opening(var pending, let bodyless), .body), (.opening(var pending, let bodyless), .end):
            // A request whose head ended it has nothing more to send (its `.end` is only recorded).
            guard !bodyless else { return }
            // The leg lets go of its list first, so the append extends it in place rather than copy it.
            requestLeg = .awaitingHead
            pending.append(part)
            requestLeg = .opening(pending: pending, bodyless: false)
        case (.forwarding, .body), (.forwarding, .end):
            sendUpstream(part, io)
        default:
            // A second head, or parts after the end or while discarding (a hook's mistake, or an answered request).
            break
        }
    }

    /// Sends one body part on the open upstream stream and records it as sent.
    mutating func sendUpstream(_ part: HTTPRequestPart, _ io: any ExchangeActions) {
        switch part {
        case .head:
            break
        case .body(let chunk):
            // A chunk forwarded as the client sent it is hashed once, for both legs.
            if !tunnel.carry(chunk, \.toServer) {
                let source = recorder.downstream.request.bodyEndingWith(chunk)
                recorder.upstream?.request.recordBody(chunk, following: source)
            }
            replay.sent(part)
            upstreamSendOutcome(io.perform(.sendRequestBody(chunk), for: id))
        case .end(let trailers):
            recorder.upstream?.request.recordEnd(trailers: trailers, at: clock())
            replay.sent(part)
            upstreamSendOutcome(io.perform(.endRequest(trailers: trailers), for: id))
            requestLeg = .sent
            // A tunnel whose other way already ended is over upstream: nothing to abandon.
            if tunnel.carriesBytes, recorder.upstream?.response.isEnded == true { upstream = .closed }
        }
    }

    /// The upstream stream opened with the head: send what waited, then forward as parts come.
    mutating func upstreamOpened(_ connection: ConnectionID, tls: TLSDetails?, streamID: Int?,
                                 sent: HTTPRequestHead, wire: HeadDigest.WireForm,
                                 _ io: any ExchangeActions) {
        guard case .opening = upstream else { return }
        upstream = .open(connection, writable: true, reading: .flowing)
        recorder.beginUpstream(connection: connection, tls: tls)
        let time = clock()
        recorder.upstream?.streamID = streamID
        recorder.upstream?.request.recordRequest(sent, wire: wire, connectionScheme: target?.scheme.rawValue ?? clientScheme,
                                                 at: time)
        guard case .opening(let pending, let bodyless) = requestLeg else { return }
        if case .asked(_, let traffic) = tunnel {
            // The client's bytes wait (one read at most) until the upstream accepts the tunnel.
            tunnel = .asked(sent: sent, traffic: traffic)
            if sent.version != .http2 {
                recorder.upstream?.translation = ExchangeFlow.extendedConnectTranslation(sent)
            }
            return
        }
        if bodyless {
            recorder.upstream?.request.recordEnd(trailers: nil, at: time)
            requestLeg = .sent
            return
        }
        requestLeg = .forwarding
        for part in pending {
            sendUpstream(part, io)
        }
    }

    /// The client's stream is gone: nothing more can reach it.
    mutating func clientLeft(_ problem: ProxyError, _ io: any ExchangeActions) {
        client = .gone
        let requestCut = !recorder.downstream.request.isEnded
        switch responseLeg {
        case .sent, .broken:
            // The response was complete; a late reset changes nothing but a cut upload.
            if requestCut { noteFailure(problem) }
        case .awaitingHead, .streaming, .switched, .stalled:
            responseLeg = .broken
            noteFailure(problem)
        }
        if requestCut { requestLeg = .discarding }
        abandonUpstream(io)
    }

    /// The proxy answers the client with an error of its own (or resets the
    /// client's stream when a response head already went out).
    mutating func fail(_ problem: ProxyError, status: Int, _ io: any ExchangeActions) {
        noteFailure(problem)
        switch responseLeg {
        case .awaitingHead:
            answer(LocalResponse(status: status, error: problem).parts, io)
        case .streaming, .switched:
            reset(problem, io)
        case .sent, .broken, .stalled:
            stopRequest()
            abandonUpstream(io)
        }
    }

    /// Answers the client with `parts` instead of the server; the upstream
    /// stream (if any) is abandoned and the rest of the request dropped.
    mutating func answer(_ parts: [HTTPResponsePart], _ io: any ExchangeActions) {
        stopRequest()
        abandonUpstream(io)
        guard case .awaitingHead = responseLeg, client.isConnected else { return }
        for part in parts {
            sendToClient(part, io)
        }
        if case .streaming = responseLeg { sendToClient(.end(trailers: nil), io) }
    }

    /// Resets the client's stream and abandons the upstream one.
    mutating func reset(_ problem: ProxyError, _ io: any ExchangeActions) {
        cutClient(problem, with: .resetClientStream, io)
    }

    /// Closes the client's connection without answering and abandons the upstream stream.
    mutating func closeClient(_ problem: ProxyError, _ io: any ExchangeActions) {
        cutClient(problem, with: .closeClientConnection, io)
    }

    /// Ends the exchange for both sides: the upstream stream is abandoned and
    /// the client, if still there, is cut off with `command` (a reset or a close).
    private mutating func cutClient(_ problem: ProxyError, with command: ExchangeCommand,
                                    _ io: any ExchangeActions) {
        noteFailure(problem)
        stopRequest()
        abandonUpstream(io)
        switch responseLeg {
        case .sent, .broken: break
        case .awaitingHead, .streaming, .switched, .stalled: responseLeg = .broken
        }
        if client.isConnected {
            client = .gone
            io.perform(command, for: id)
        }
    }

    /// Sends nothing more, upstream or to the client, and keeps the client
    /// waiting: the exchange ends when the client leaves.
    mutating func stall(_ problem: ProxyError, _ io: any ExchangeActions) {
        noteFailure(problem)
        stopRequest()
        abandonUpstream(io)
        switch responseLeg {
        case .awaitingHead, .streaming, .switched: responseLeg = .stalled
        case .sent, .broken, .stalled: break
        }
    }

    /// Nothing more of the request goes upstream.
    private mutating func stopRequest() {
        switch requestLeg {
        case .sent: break
        case .awaitingHead, .opening, .forwarding, .discarding: requestLeg = .discarding
        }
    }
}
