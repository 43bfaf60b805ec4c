import Evidence
import HTTP

/// RFC 8441 extended CONNECT from an HTTP/2 client (`:protocol websocket`):
/// the upstream stream opens with the CONNECT (the HTTP/1.1 transport sends
/// it as the `Upgrade` handshake, the HTTP/2 one as it is, if the server
/// allows it), the client's bytes wait until the upstream accepts, then the
/// request and response bodies are the tunnel's two byte streams, relayed
/// with the flow's backpressure (HTTP/2 flow control on the client leg) and
/// recorded like an HTTP/1.1 upgrade: each leg's `relayed`, per direction.
extension ExchangeFlow {
    /// Where an extended CONNECT's tunnel is.
    ///
    /// Invariants: none for any other request; asked → open or refused,
    /// never back. The bytes a tunnel carried (`RelayTraffic`, per leg and
    /// direction, digested with the recording's function) exist only while
    /// it is asked or open, so other exchanges allocate no running digests,
    /// and a refused tunnel's are dropped with it; the CONNECT as it went
    /// upstream exists only while the answer is awaited.
    enum Tunnel {
        /// Not an extended CONNECT.
        case none
        /// Asked for; its answer has not come, and the client's bytes wait.
        /// `sent`: the extended CONNECT as it went upstream (translated to an
        /// HTTP/1.1 `Upgrade` when the upstream speaks HTTP/1.1), to check a
        /// 101 against; nil while the upstream stream opens.
        case asked(sent: HTTPRequestHead?, traffic: RelayTraffic)
        /// Accepted (a 101 from HTTP/1.1, a 2xx from HTTP/2): the bodies are the tunnel's bytes.
        case open(RelayTraffic)
        /// Answered otherwise: that answer goes to the client as it is.
        case refused

        /// Counts `chunk` in `direction` when body bytes are the tunnel's
        /// (relayed, not recorded as a body); false, counting nothing, otherwise.
        mutating func carry(_ chunk: [UInt8], _ direction: WritableKeyPath<RelayTraffic, RelayTally>) -> Bool {
            switch self {
            case .asked(let sent, var traffic):
                self = .none // lets go of the payload, so the tally is changed in place, not copied
                traffic[keyPath: direction].add(chunk)
                self = .asked(sent: sent, traffic: traffic)
                return true
            case .open(var traffic):
                self = .none
                traffic[keyPath: direction].add(chunk)
                self = .open(traffic)
                return true
            case .none, .refused:
                return false
            }
        }

        /// Whether body bytes are the tunnel's (counted as relayed, not recorded as a body).
        var carriesBytes: Bool {
            switch self {
            case .asked, .open: return true
            case .none, .refused: return false
            }
        }
    }

    /// What the upstream leg's record says of the translation, for a CONNECT sent as `sent` over HTTP/1.1.
    static func extendedConnectTranslation(_ sent: HTTPRequestHead) -> String {
        "RFC 8441: the client's HTTP/2 extended CONNECT (:protocol \(sent.fields["upgrade"] ?? "")) was sent as "
            + "this HTTP/1.1 Upgrade, with a Sec-WebSocket-Key of the proxy's; a 101 goes to the client as 200"
    }

    /// The upstream's final answer to the extended CONNECT (or its 101).
    mutating func tunnelAnswered(_ head: HTTPResponseHead, wire: HeadDigest.WireForm,
                                 _ io: any ExchangeActions) {
        recorder.upstream?.response.recordResponse(head, wire: wire, at: clock())
        let accepted: HTTPResponseHead
        guard case .asked(let sent, let traffic) = tunnel else { return }
        if head.status == 101 {
            guard let sent, sent.version != .http2 else {
                return tunnelFailed("101 Switching Protocols on an HTTP/2 stream", io)
            }
            if let problem = ExtendedConnect.problem(with: head, to: sent) {
                return tunnelFailed("the origin's 101 does not complete the WebSocket handshake: \(problem)",
                                    io)
            }
            accepted = ExtendedConnect.acceptedResponse(head)
        } else if (200..<300).contains(head.status) {
            accepted = head
        } else {
            tunnel = .refused
            stopTunnelRequest()
            return passResponse(.head(head), io)
        }
        tunnel = .open(traffic)
        guard case .opening(let pending, _) = requestLeg else { return passResponse(.head(accepted), io) }
        requestLeg = .forwarding
        passResponse(.head(accepted), io)
        for part in pending { sendUpstream(part, io) }
    }

    /// Once the answer to a refused extended CONNECT went out whole, the
    /// exchange waits no more for the client's stream, which it keeps open
    /// for a tunnel that will not come (RFC 9113 §8.1: a complete response
    /// may precede the request's end; the HTTP/2 driver drops what still
    /// comes on it). The request is recorded as it came: unfinished. No
    /// RST_STREAM: submitted now, it would discard the response not yet sent.
    mutating func dropRefusedTunnel() {
        guard case .refused = tunnel, client.isConnected, recorder.downstream.response.isEnded,
              !recorder.downstream.request.isEnded else { return }
        client = .gone
    }

    /// The bytes the client sent while the tunnel was asked for are dropped with it.
    private mutating func stopTunnelRequest() {
        if case .opening = requestLeg { requestLeg = .discarding }
    }

    /// A 101 that opens no valid tunnel: the client gets 502, the upstream stream is let go.
    private mutating func tunnelFailed(_ reason: String, _ io: any ExchangeActions) {
        tunnel = .refused
        stopTunnelRequest()
        abandonUpstream(io)
        fail(ProxyError(.protocolError, at: .upstreamResponse, reason, status: .httpProtocolError),
             status: 502, io)
    }
}
