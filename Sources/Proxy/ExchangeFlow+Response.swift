import Evidence
import HTTP

/// The response's way: from upstream through the hooks to the client.
extension ExchangeFlow {
    mutating func responseHead(_ head: HTTPResponseHead, wire: HeadDigest.WireForm,
                               _ io: any ExchangeActions) {
        guard case .open = upstream else { return }
        if case .asked = tunnel, !head.isInformational || head.status == 101 {
            return tunnelAnswered(head, wire: wire, io)
        }
        if head.status == 101 && !upgradeRequested {
            recorder.upstream?.response.recordResponse(head, wire: wire, at: clock())
            return upstreamFailed(ProxyError(.protocolError, at: .upstreamResponse,
                                             "101 Switching Protocols to a request that asked for no upgrade",
                                             status: .httpProtocolError), io)
        }
        if !head.isInformational || head.status == 101 {
            recorder.upstream?.response.recordResponse(head, wire: wire, at: clock())
        } else {
            recorder.upstream?.recordInterim(head, wire: wire, at: clock())
        }
        passResponse(.head(head), io)
    }

    mutating func responseEnd(_ trailers: HTTPFields?, _ io: any ExchangeActions) {
        guard case .open = upstream else { return }
        recorder.upstream?.response.recordEnd(trailers: trailers, at: clock())
        if case .open = tunnel {
            // The origin finished sending; the client may still send (a half-closed tunnel).
            if case .sent = requestLeg { upstream = .closed }
            return passResponse(.end(trailers: nil), io)
        }
        if upgradeRequested, recorder.upstream?.response.responseStatus == 101 {
            // The connection now carries the new protocol: the driver takes it
            // over for the relay; it is never reset nor pooled again.
            upstream = .closed
            return passResponse(.end(trailers: nil), io)
        }
        // The upstream stream is done. If the request is not all sent (the
        // server answered early), it is abandoned: an HTTP/1.1 connection in
        // the middle of a request body cannot serve again.
        if case .sent = requestLeg {
            upstream = .closed
        } else {
            abandonUpstream(io)
            requestLeg = .discarding
        }
        passResponse(.end(trailers: trailers), io)
    }

    /// The upstream could not be reached, or its stream failed.
    mutating func upstreamFailed(_ problem: ProxyError, _ io: any ExchangeActions) {
        switch upstream {
        case .opening: upstream = .closed
        case .open:
            recorder.upstream?.broken = problem.description
            upstream = .closed
        case .none, .closed: return
        }
        if retryUpstream(problem, io) { return }
        fail(problem, status: 502, io)
    }

    /// Runs a response part from upstream through the hooks and acts on what they say.
    mutating func passResponse(_ part: HTTPResponsePart, _ io: any ExchangeActions) {
        if hooksOnlyWatch, !responsePacer.isHolding {
            // What the chain and the pacer would do with the lone `.forward(part)` it makes, without them.
            for hook in hooks { hook.watchResponse(part) }
            return sendToClient(part, io)  // drops what can no longer reach the client
        }
        responsePacer.hold(HookChain.run(part, through: hooks[...], { $0.response($1) }))
        releaseResponse(io)
    }

    /// Carries out the response's held hook outputs in order, until one
    /// waits for the timer or nothing more can reach the client.
    mutating func releaseResponse(_ io: any ExchangeActions) {
        while true {
            // After an answer, a failure, a reset or a stall, the rest of the outputs has nowhere to go.
            switch responseLeg {
            case .awaitingHead, .streaming, .switched: break
            case .sent, .broken, .stalled: return responsePacer.discard()
            }
            guard let step = responsePacer.next() else { return }
            if let output = step.output, let forwarded = act(on: output, leg: .response, io) {
                sendToClient(forwarded, io)
            }
            if let wait = step.wait { io.perform(.startTimer(.response, after: wait), for: id) }
        }
    }

    /// Sends one response part to the client and records it as sent (the
    /// head and the end as their outcomes say they were written).
    mutating func sendToClient(_ part: HTTPResponsePart, _ io: any ExchangeActions) {
        guard client.isConnected else { return }
        switch (responseLeg, part) {
        case (.awaitingHead, .head(let head)) where head.isInformational && head.status != 101 && clientIsHTTP10:
            // RFC 9110 §15.2: no 1xx to an HTTP/1.0 client. The leg's record says it was held back.
            recorder.downstream.recordInterimWithheld(head)
        case (.awaitingHead, .head(let head)):
            let shaped = HopByHop.shapeResponse(head)
            clientSendOutcome(io.perform(.sendResponse(.head(shaped)), for: id))
            if shaped.status == 101 {
                responseLeg = .switched
            } else if !shaped.isInformational {
                responseLeg = .streaming
            }
        case (.streaming, .body(let chunk)):
            if !tunnel.carry(chunk, \.toClient) {
                // A chunk forwarded as the server sent it is hashed once, for both legs.
                recorder.downstream.response.recordBody(chunk, following: recorder.upstream?.response.bodyEndingWith(chunk))
            }
            clientSendOutcome(io.perform(.sendResponse(part), for: id))
        case (.streaming, .end):
            let outcome = io.perform(.sendResponse(part), for: id)
            responseLeg = .sent
            clientSendOutcome(outcome)
        case (.switched, .end):
            // A 101 has no body; its end is where the other protocol begins.
            if case .failed(let problem) = io.perform(.relayUpgraded, for: id) { failedSends.append(.relay(problem)) }
        default:
            // A part out of order (a hook's mistake) is dropped rather than sent malformed.
            break
        }
    }

    /// The relay after a 101 ended: each leg's streams go into the record,
    /// and the exchange is over.
    mutating func upgradeRelayEnded(downstream: RelayedStreams?, upstream streams: RelayedStreams?,
                                    _ problem: ProxyError?) {
        guard case .switched = responseLeg else { return }
        if let problem { noteFailure(problem) }
        recorder.downstream.relayed = downstream
        recorder.upstream?.relayed = streams
        if !recorder.downstream.response.isEnded {
            recorder.downstream.response.recordEnd(trailers: nil, at: clock())
        }
        responseLeg = .sent
    }
}
