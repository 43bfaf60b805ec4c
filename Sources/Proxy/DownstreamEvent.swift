import Evidence
import HTTP
import TLS
import Transport

/// What a `DownstreamLayer` (one client connection) is told by its driver:
/// what happens by itself. What a command came to is that command's
/// `CommandOutcome`, never an event.
public enum DownstreamEvent: Sendable {
    /// A request head arrived: the next request on HTTP/1.1, a new stream on
    /// HTTP/2 (`streamID`), its body framed as `bodyFraming`;
    /// `expectsContinue` when the client may wait for a `100 Continue`
    /// before it sends the body. The driver numbers exchanges from 1 per connection.
    case requestHead(ExchangeID, HTTPRequestHead, wire: HeadDigest.WireForm, streamID: Int?, bodyFraming: HTTP1Framing,
                     expectsContinue: Bool = false)
    /// Something happened to one exchange.
    case exchange(ExchangeID, ExchangeEvent)
    /// The client's bytes are not a request the codec accepts. The codec
    /// answered with `answer` (the error's status, its reason as the body)
    /// unless a response was under way (nil), and closes the connection.
    case malformedRequest(HTTP1ParseError, answer: HTTPResponseHead?, wire: HeadDigest.WireForm?)
    /// HTTP/2: the codec refused a request before it became a stream (its
    /// header list over the limit; RST_STREAM ENHANCE_YOUR_CALM went out).
    /// `request` is what was kept of its head (pseudo-header fields,
    /// `Intact-Trace`); the connection goes on. The driver numbers it like a request.
    case refusedStream(ExchangeID, streamID: Int, request: HTTPRequestHead?, reason: String)
    /// The CONNECT target answered the probe (a TCP connection the driver keeps
    /// for a passthrough tunnel).
    case connectTargetReached
    /// The CONNECT target could not be reached.
    case connectTargetFailed(ProxyError)
    /// The client's first bytes (after CONNECT, or on a reverse listener) are a ClientHello.
    case clientHello(ClientHelloSummary)
    /// The TLS handshake with the client completed.
    case tlsEstablished(TLSConnectionInfo)
    /// The client's first bytes were no ClientHello, or the TLS handshake
    /// with it failed (the alert went out).
    case tlsFailed(ProxyError)
    /// A passthrough tunnel ended; `upstream` names its server connection when
    /// one was made; `relayed` is what it carried on each leg (nil when no relay ran).
    case tunnelClosed(upstream: ConnectionID?, error: ProxyError?,
                      relayed: (downstream: RelayedStreams, upstream: RelayedStreams)? = nil)
    /// The client connection closed (nil) or failed.
    case connectionClosed(ProxyError?)
    /// The HTTP connection that held the client's channel closed (nil) or
    /// failed: during the TLS handshake a `.tlsFailed`, else a `.connectionClosed`.
    case clientConnectionEnded(TransportError?)
}

/// What a `DownstreamLayer` asks its driver to do, one at a time through
/// `DownstreamActions.perform(_:)`, each carried out before the layer goes on.
public enum DownstreamCommand: Sendable, Hashable {
    /// A command of one exchange (the layer issues `.finished` this way, its
    /// record annotated with the connection's faults; the flows issue theirs
    /// through `ExchangeActions`).
    case exchange(ExchangeID, ExchangeCommand)
    /// Check that the target of this exchange's CONNECT accepts a TCP
    /// connection (resolve and connect, no TLS); answer with
    /// `.connectTargetReached` or `.connectTargetFailed`.
    case probeConnectTarget(ExchangeID, UpstreamTarget)
    /// Answer this exchange's CONNECT with `head` (200); the connection then
    /// carries the tunnel: peek at the client's first bytes next. `.failed`
    /// when the answer could not go out (the connection is being closed).
    case acceptConnect(ExchangeID, HTTPResponseHead)
    /// Read the client's first bytes without consuming them and report a
    /// `.clientHello` (or `.tlsFailed` when they are not one).
    case peekClientHello
    /// Handshake with the client as a TLS server presenting a leaf minted
    /// for `certificateName` (with the add-ons' `changes`: a client
    /// certificate demanded, an untrusted issuer), then serve HTTP/1.1 or
    /// HTTP/2 per ALPN.
    case startTLS(certificateName: String, changes: DownstreamTLSChanges = DownstreamTLSChanges())
    /// Serve plain HTTP/1.1 on the connection (a forward proxy's clients speak it first).
    case servePlainHTTP
    /// Relay bytes untouched between the client and the target (a TCP
    /// connection; reuse the probe's) until either side closes, then report `.tunnelClosed`.
    case openTunnel(UpstreamTarget)
    /// Write this record (a connection-level one; exchanges finish through `.exchange`).
    case record(ExchangeRecord)
    /// Close the client connection.
    case close
}

/// Carries out a client connection's commands as its layer issues them (the
/// connection's `DownstreamDriver`; a script in tests), and its exchanges'
/// commands as their flows issue them. The invariant of `ExchangeActions`
/// holds: `perform` never calls back into the layer.
public protocol DownstreamActions: ExchangeActions {
    @discardableResult
    func perform(_ command: DownstreamCommand) -> CommandOutcome
}
