import TLS

/// What a `ByteChannel` tells its handler. Delivered only on the channel's
/// loop, and never from inside a call the handler made on the channel.
public enum ChannelEvent {
    /// Server TLS with `ClientHelloPolicy.ask`: the peer's ClientHello, read
    /// before any TLS engine saw it. The channel waits (not reading) until the
    /// handler calls `continueHandshake(with:)`, `passThrough()`, `close()` or `abort()`.
    case clientHello(ClientHelloSummary)
    /// The channel carries application bytes from now on: after the TLS
    /// handshake (with what it settled), or at once for plaintext and after
    /// `passThrough()` (nil). Comes again after `startTLS`.
    case established(TLSConnectionInfo?)
    /// Application bytes (plaintext, decrypted when TLS), in order. Never empty.
    case received([UInt8])
    /// The peer finished sending; nothing more will be received. Writing is still possible.
    case readEOF(ReadEnd)
    /// Pending bytes fell to the low watermark after reaching the high one: write again.
    case writable
    /// The channel is closed; the last event. `nil` after a clean close
    /// (`close()`, `abort()`, or both directions finished), else the failure.
    case closed(TransportError?)
}

/// How the peer ended its sending side.
public enum ReadEnd: Hashable, Sendable, CustomStringConvertible {
    /// TLS close_notify: the peer said it was done.
    case closeNotify
    /// TCP FIN on a plaintext channel.
    case endOfStream
    /// TCP FIN on a TLS channel without close_notify first. Many HTTP peers do
    /// this; a body that was not length-delimited may have been truncated.
    case endOfStreamWithoutCloseNotify

    public var description: String {
        switch self {
        case .closeNotify: return "TLS close_notify"
        case .endOfStream: return "TCP FIN"
        case .endOfStreamWithoutCloseNotify: return "TCP FIN without TLS close_notify"
        }
    }
}

/// What a TLS server channel does once it has read the ClientHello.
public enum ClientHelloPolicy: Hashable, Sendable {
    /// Go on with the handshake at once.
    case proceed
    /// Deliver `.clientHello` and wait for the handler's decision (pick a
    /// context by SNI, pass the bytes through raw, or refuse).
    case ask
}

/// Settings of a TLS server channel.
public struct TLSServerSetup: Sendable {
    /// The server context (certificate, ALPN preference, client certificates).
    public var context: TLSContext
    public var clientHelloPolicy: ClientHelloPolicy
    /// From `start` (or `startTLS`) until the handshake completes; then the
    /// channel closes with `.timeout(.tlsHandshake)`.
    public var handshakeTimeout: Duration

    public init(context: TLSContext, clientHelloPolicy: ClientHelloPolicy = .proceed,
                handshakeTimeout: Duration = .seconds(10)) {
        self.context = context
        self.clientHelloPolicy = clientHelloPolicy
        self.handshakeTimeout = handshakeTimeout
    }
}

/// Settings of a TLS client channel.
public struct TLSClientSetup: Sendable {
    /// The client context (trust roots, ALPN offer, client certificate).
    public var context: TLSContext
    /// The host the connection is for: a DNS name is sent as SNI and checked
    /// against the certificate; an IP address is only checked; nil checks no name.
    public var serverName: String?
    public var handshakeTimeout: Duration

    public init(context: TLSContext, serverName: String?, handshakeTimeout: Duration = .seconds(10)) {
        self.context = context
        self.serverName = serverName
        self.handshakeTimeout = handshakeTimeout
    }
}

/// Whether a channel speaks TLS, and in which role.
public enum ChannelSecurity: Sendable {
    case plaintext
    case tlsServer(TLSServerSetup)
    case tlsClient(TLSClientSetup)
}
