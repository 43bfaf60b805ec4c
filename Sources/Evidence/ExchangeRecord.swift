import HTTP

/// One exchange (a request and its response) as one tap saw it: the unit of a
/// recording, one JSON line each.
///
/// A proxy tap records two legs — `downstream` (the client side) and
/// `upstream` (the server side); a client or server tap records one. Pairing
/// across taps uses `traceID` when the client sent `Intact-Trace`.
///
/// Optional properties here and in `Leg` are spelled `Optional<…>`: one
/// written `T?` is set to nil before the initialiser assigns it, and Swift
/// then copies the whole value out of the initialiser (a retain and a
/// release of everything in it), once per record and leg.
public struct ExchangeRecord: Codable, Hashable, Sendable {
    /// Unique within the recording.
    public var exchangeID: String
    /// The `Intact-Trace` value of the request, when it carried one.
    public var traceID: Optional<String>
    /// The name of the tap that recorded this exchange.
    public var tap: String
    /// The legs in the order the exchange crossed them (downstream first for a proxy).
    public var legs: [Leg]
    /// The sign-in step this exchange was classified as (`AUTH_FLOW.md`).
    public var authFlowStep: Optional<String>
    /// Faults the tap applied to this exchange, in the order applied.
    public var faults: [RecordedFault]
    /// Why the exchange broke, when it did.
    public var error: Optional<Failure>
    /// Upstream attempts that failed before the one the upstream leg shows,
    /// each with why: a request the upstream never processed (GOAWAY,
    /// REFUSED_STREAM, a reused connection closed unanswered) is sent once
    /// more. Nil when the first attempt carried the exchange.
    public var retries: Optional<[Failure]>
    /// Set on a record of a connection that carried no request (its legs hold
    /// no message, or only the CONNECT that opened it): how it ended. Nil on
    /// every exchange.
    public var connection: Optional<RequestlessConnection>

    public init(exchangeID: String, traceID: String? = nil, tap: String, legs: [Leg], authFlowStep: String? = nil,
                faults: [RecordedFault] = [], error: Failure? = nil, retries: [Failure]? = nil,
                connection: RequestlessConnection? = nil) {
        self.exchangeID = exchangeID
        self.traceID = traceID
        self.tap = tap
        self.legs = legs
        self.authFlowStep = authFlowStep
        self.faults = faults
        self.error = error
        self.retries = retries
        self.connection = connection
    }

    /// The field a client sets so taps can pair the same exchange across hops.
    public static let traceFieldName = "Intact-Trace"

    /// The trace id in a request's fields, if any.
    public static func traceID(in fields: HTTPFields) -> String? {
        fields[traceFieldName]
    }

    /// The leg with the given role, if recorded.
    public func leg(_ role: Leg.Role) -> Leg? {
        legs.first { $0.role == role }
    }

    /// One side of an exchange at a tap: one connection, one request, one response.
    public struct Leg: Codable, Hashable, Sendable {
        /// Which side of the tap this leg is, and so what its messages mean:
        /// - `downstream`: request as received from the client, response as sent back;
        /// - `upstream`: request as sent to the server, response as received;
        /// - `client` (the client simulator): request as sent, response as received;
        /// - `server` (the mock server): request as received, response as sent.
        public enum Role: String, Codable, Hashable, Sendable, CaseIterable {
            case downstream, upstream, client, server
        }

        public var role: Role
        /// The connection this leg travelled on, unique within the recording.
        public var connectionID: String
        /// The HTTP/2 stream id, when the leg was HTTP/2.
        public var streamID: Optional<Int>
        /// The TLS session; nil over plain TCP.
        public var tls: Optional<TLSDetails>
        /// Nil when the request never crossed this leg (for example, refused upstream).
        public var request: Optional<RecordedMessage>
        /// Nil when no response crossed this leg.
        public var response: Optional<RecordedMessage>
        /// The interim (1xx other than 101) responses that crossed this leg
        /// before the final one, in order (`100 Continue`, `103 Early Hints`);
        /// head digests only. Nil when there were none.
        public var interimResponses: Optional<[RecordedMessage]>
        /// The statuses of interim responses that reached this leg's sender
        /// but were not sent on it, in order: RFC 9110 §15.2 forbids sending a
        /// 1xx to an HTTP/1.0 client. Nil when none was withheld.
        public var interimWithheld: Optional<[Int]>
        /// After a `101 Switching Protocols`: the bytes relayed each way on
        /// this leg. Nil when the exchange did not switch protocols.
        public var relayed: Optional<RelayedStreams>
        /// Set when this leg's messages are a translation of the other leg's
        /// that no RFC field mapping covers, saying which (an HTTP/2 extended
        /// CONNECT sent as an HTTP/1.1 `Upgrade`, RFC 8441 §5). Nil otherwise.
        public var translation: Optional<String>
        /// Why the tap let go of this leg before both its messages were
        /// complete (the client left, the tap answered the client itself, the
        /// server answered before the whole request), and how far the leg got:
        /// `… before the upstream connection was ready` (then the leg never got
        /// a connection: `connectionID` is `none` and no request crossed it),
        /// `… before the request was completely sent`, `… before the response
        /// was completely read`; or the leg's own failure. Nil when the leg
        /// completed.
        public var broken: Optional<String>

        public init(role: Role, connectionID: String, streamID: Int? = nil, tls: TLSDetails? = nil,
                    request: RecordedMessage? = nil, response: RecordedMessage? = nil,
                    interimResponses: [RecordedMessage]? = nil, interimWithheld: [Int]? = nil,
                    relayed: RelayedStreams? = nil, translation: String? = nil, broken: String? = nil) {
            self.translation = translation
            self.broken = broken
            self.interimResponses = interimResponses
            self.interimWithheld = interimWithheld
            self.relayed = relayed
            self.role = role
            self.connectionID = connectionID
            self.streamID = streamID
            self.tls = tls
            self.request = request
            self.response = response
        }
    }

    /// A fault the tap applied (see `FAULTS.md`), as a record carries it: the
    /// rule's name and what it did, in words. The fault engine's own value is
    /// `Faults.AppliedFault`; `ProxyAddons` turns one into the other.
    public struct RecordedFault: Codable, Hashable, Sendable {
        /// The fault's name (`strip-header`, `reset-stream`, …).
        public var name: String
        /// What exactly it did (`removed Authorization`), when worth saying.
        public var detail: String?

        public init(name: String, detail: String? = nil) {
            self.name = name
            self.detail = detail
        }
    }

    /// Why an exchange broke, and where.
    public struct Failure: Codable, Hashable, Sendable {
        public enum Kind: String, Codable, Hashable, Sendable {
            /// The peer refused the TCP connection.
            case connectionRefused
            /// The host name did not resolve.
            case resolution
            /// The TLS handshake or a TLS record failed.
            case tls
            /// The peer reset the connection or the HTTP/2 stream.
            case reset
            /// The peer closed before the message was complete.
            case closedEarly
            /// No progress within the configured time.
            case timeout
            /// The peer broke HTTP framing rules.
            case protocolError
            /// Intact itself failed (a bug or resource exhaustion).
            case `internal`
        }

        /// Which side of the tap failed: the leg facing the client or the one facing the server.
        public enum Side: String, Codable, Hashable, Sendable {
            /// The client leg: a proxy's downstream, the mock server's only leg.
            case client
            /// The upstream leg: a proxy's upstream, the client simulator's only leg.
            case upstream
        }

        /// How far the exchange got when it failed.
        public enum Stage: String, Codable, Hashable, Sendable {
            /// Opening the TCP connection (refused, unresolved, timed out).
            case connect
            /// The TLS handshake or a TLS record.
            case tls
            /// Receiving or sending the request.
            case request
            /// Receiving or sending the response.
            case response
        }

        public var kind: Kind
        /// Where it broke: a leg and a stage, e.g. `upstream TLS handshake`.
        public var location: String
        /// The precise error, e.g. the TLS alert or the parser's reason.
        public var message: String
        /// The side that failed; nil when `location` does not say (a recording of an older build).
        public var side: Side?
        /// The stage it failed at; nil when `location` does not say.
        public var stage: Stage?

        /// A failure whose side and stage are read from `location` unless given
        /// (`upstream TLS handshake` → upstream, tls).
        public init(kind: Kind, location: String, message: String, side: Side? = nil, stage: Stage? = nil) {
            self.kind = kind
            self.location = location
            self.message = message
            self.side = side ?? Failure.side(of: location)
            self.stage = stage ?? Failure.stage(of: location, kind: kind)
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(kind: try container.decode(Kind.self, forKey: .kind),
                      location: try container.decode(String.self, forKey: .location),
                      message: try container.decode(String.self, forKey: .message),
                      side: try container.decodeIfPresent(Side.self, forKey: .side),
                      stage: try container.decodeIfPresent(Stage.self, forKey: .stage))
        }

        private enum CodingKeys: String, CodingKey {
            case kind
            case location = "where"
            case message
            case side, stage
        }

        /// The side a location names by its first word: `downstream`/`server`
        /// face the client, `upstream`/`client` (the client simulator's own
        /// exchange, which faces the server) face the server.
        static func side(of location: String) -> Side? {
            switch location.split(separator: " ").first.map(String.init)?.lowercased() {
            case "downstream", "server": return .client
            case "upstream", "client", "passthrough": return .upstream
            default: return nil
            }
        }

        /// The stage a location names (`connect`, `TLS`, `request`, `response`),
        /// else the one the kind implies (refused and unresolved: connect; TLS: tls).
        static func stage(of location: String, kind: Kind) -> Stage? {
            let words = location.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map(String.init)
            if words.contains("connect") || words.contains("connection") && kind != .reset && kind != .closedEarly {
                return .connect
            }
            if words.contains("tls") || words.contains("handshake") { return .tls }
            if words.contains("response") { return .response }
            if words.contains("request") || words.contains("connect") { return .request }
            switch kind {
            case .connectionRefused, .resolution: return .connect
            case .tls: return .tls
            default: return nil
            }
        }
    }
}
