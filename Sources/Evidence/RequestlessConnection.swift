/// What happened on a connection that carried no request: a port probe that
/// connected and closed, a reset, a TLS handshake that finished or failed
/// before any request. A tap records one as a record with no message and
/// this value (`ExchangeRecord.connection`); the verifier lists it per tap
/// and never counts it as an exchange of the app, so it never fails a
/// policy. A handshake that failed after the client sent its ClientHello is
/// a connection failure: it is paired with the exchange a neighbouring tap
/// saw fail at the same time, when one did.
public struct RequestlessConnection: Codable, Hashable, Sendable {
    /// How the connection ended.
    public enum Outcome: String, Codable, Hashable, Sendable, CaseIterable, CustomStringConvertible {
        /// The peer connected and closed without sending a byte (a port probe, an L4 health check).
        case closed
        /// The peer reset the connection before any request.
        case reset
        /// The TLS handshake completed; the connection closed with no request.
        case handshakeOnly = "handshake-only"
        /// The TLS handshake failed after the client spoke: after its
        /// ClientHello (a client rejecting the certificate, a protocol
        /// mismatch), or on bytes that are not TLS (plain HTTP to a TLS port).
        case handshakeFailed = "handshake-failed"
        /// The peer sent bytes that are no HTTP request (an HTTP/0.9
        /// `GET /`, an unparseable request line): answered 400 and closed;
        /// `received` quotes what came.
        case unreadableRequest = "unreadable-request"
        /// A passthrough tunnel (`--passthrough`, or a host outside
        /// `--intercept`): relayed untouched, its CONNECT and byte counts
        /// recorded, no request seen.
        case tunnel

        public var description: String {
            switch self {
            case .closed: return "connected and closed"
            case .reset: return "reset"
            case .handshakeOnly: return "TLS handshake, no request"
            case .handshakeFailed: return "TLS handshake failed"
            case .unreadableRequest: return "unreadable request, answered 400"
            case .tunnel: return "tunnelled untouched"
            }
        }
    }

    public var outcome: Outcome
    /// The peer's address (`127.0.0.1:51234`), when the tap knew it.
    public var peer: String?
    /// When the tap saw the connection end.
    public var at: Timestamp?
    /// The TLS version, when a handshake completed.
    public var tlsVersion: String?
    /// What the peer sent, quoted (`GET /`; bytes outside printable ASCII as
    /// `\xNN`), for an `unreadable-request`.
    public var received: String?

    public init(outcome: Outcome, peer: String? = nil, at: Timestamp? = nil, tlsVersion: String? = nil,
                received: String? = nil) {
        self.outcome = outcome
        self.peer = peer
        self.at = at
        self.tlsVersion = tlsVersion
        self.received = received
    }

    /// The event a record stands for: its `connection` value, else (a
    /// recording of an older build, or the mock server's) a record with no
    /// message whose failure is a connection-level one. Nil for a record that
    /// carried a message, and for the client's: a request the client could
    /// not send is still an exchange of the app, failed.
    public static func of(_ record: ExchangeRecord) -> RequestlessConnection? {
        // A tunnel's record holds the CONNECT that opened it (its target) and nothing the app sent inside.
        if let event = record.connection, event.outcome == .tunnel { return event }
        guard !record.legs.contains(where: { $0.request != nil || $0.response != nil }) else { return nil }
        if var event = record.connection {
            // A peer that spoke, but not TLS (plain HTTP to a TLS port), was recorded as "closed"
            // by builds that looked only for a ClientHello: its handshake failed, and says why.
            if event.outcome == .closed, let error = record.error, error.kind == .tls,
               FailureExplanation.clause(forMessage: error.message) != nil {
                event.outcome = .handshakeFailed
            }
            return event
        }
        guard record.traceID == nil, !record.legs.contains(where: { $0.role == .client }) else { return nil }
        guard let error = record.error else { return RequestlessConnection(outcome: .closed) }
        switch error.kind {
        case .closedEarly: return RequestlessConnection(outcome: .closed)
        case .reset: return RequestlessConnection(outcome: .reset)
        case .tls: return RequestlessConnection(outcome: .handshakeFailed)
        default: return nil
        }
    }
}
