import Evidence
import HTTP
import TLS

/// Records of what happens on a client connection outside an `ExchangeFlow`:
/// a failed TLS handshake, a passthrough tunnel, a request the codec rejected.
extension DownstreamLayer {
    /// A failed handshake with the client: the downstream leg's TLS details
    /// hold what the ClientHello said, if it came. After a CONNECT the record
    /// is that exchange's, with the CONNECT and its 200 (so the target shows);
    /// in reverse mode it is exchange 0 of the connection. A connection event
    /// (`RequestlessConnection`) either way: closed or reset before a ClientHello,
    /// else a handshake that failed after the client spoke.
    func connectionRecord(connect: PendingConnect?, hello: ClientHelloSummary?, error: ProxyError) -> ExchangeRecord {
        var recorder = makeRecorder(connect?.id ?? ExchangeID(connection: id, sequence: 0), tls: hello.map { TLSDetails($0) })
        if let connect { Self.recordConnect(connect, into: &recorder) }
        let outcome: RequestlessConnection.Outcome
        if hello != nil {
            outcome = .handshakeFailed
        } else {
            outcome = error.failure.kind == .reset ? .reset : .closed
        }
        let time = recorder.now
        var record = recorder.finish(error: error)
        record.connection = RequestlessConnection(outcome: outcome, peer: peer, at: time)
        return record
    }

    /// A connection whose TLS handshake completed (or, on a plain reverse
    /// listener, `tls` nil: that connected) and that closed before any
    /// request: a connection event (`handshake-only`; `closed` or `reset`
    /// without TLS), with no failure unless the close was one.
    func handshakeOnlyRecord(tls: TLSDetails?, error: ProxyError?) -> ExchangeRecord {
        var recorder = makeRecorder(ExchangeID(connection: id, sequence: 0), tls: tls)
        let time = recorder.now
        var record = recorder.finish(error: error)
        let outcome: RequestlessConnection.Outcome
        if tls != nil {
            outcome = .handshakeOnly
        } else {
            outcome = error?.failure.kind == .reset ? .reset : .closed
        }
        record.connection = RequestlessConnection(outcome: outcome, peer: peer, at: time,
                                            tlsVersion: record.legs.first?.tls?.version)
        return record
    }

    /// The CONNECT request and the 200 that accepted it, on the downstream leg.
    private static func recordConnect(_ connect: PendingConnect, into recorder: inout ExchangeRecorder) {
        let time = recorder.now
        recorder.downstream.request.recordRequest(connect.head, wire: connect.wire, connectionScheme: "http", at: time)
        recorder.downstream.request.recordEnd(trailers: nil, at: time)
        let accepted = HTTPResponseHead(status: 200, reason: "Connection established")
        recorder.downstream.response.recordResponse(accepted, wire: Self.http1Wire(accepted, requestMethod: "CONNECT"),
                                                    at: time)
        recorder.downstream.response.recordEnd(trailers: nil, at: time)
        recorder.traceID = nil
    }

    /// A passthrough tunnel: a connection record (exchange `dN.0`,
    /// connection outcome `tunnel`), never an exchange, since the proxy saw
    /// no request in it: the CONNECT and its 200 on the downstream leg (so
    /// the target shows), with the TLS details the ClientHello showed (the
    /// session itself is opaque to the proxy) and the bytes relayed each
    /// way (`relayed`, counted and digested); the upstream leg names the
    /// server connection and what it carried.
    func tunnelRecord(_ connect: PendingConnect, hello: ClientHelloSummary?, upstream: ConnectionID?,
                      relayed: (downstream: RelayedStreams, upstream: RelayedStreams)?,
                      error: ProxyError?) -> ExchangeRecord {
        var recorder = makeRecorder(ExchangeID(connection: id, sequence: 0), tls: hello.map { TLSDetails($0) })
        Self.recordConnect(connect, into: &recorder)
        recorder.downstream.relayed = relayed?.downstream
        if let upstream {
            recorder.beginUpstream(connection: upstream, tls: nil)
            recorder.upstream?.relayed = relayed?.upstream
        }
        let time = recorder.now
        var record = recorder.finish(error: error)
        record.connection = RequestlessConnection(outcome: .tunnel, peer: peer, at: time)
        return record
    }

    /// A request the codec rejected: no request on the leg, only the codec's
    /// answer (its body is `"<status> <reason>\n"`, as `HTTP1ServerDriver` writes it).
    func malformedRecord(_ exchange: ExchangeID, error: HTTP1ParseError,
                         answer: (head: HTTPResponseHead, wire: HeadDigest.WireForm)?, problem: ProxyError) -> ExchangeRecord {
        var recorder = makeRecorder(exchange, tls: currentTLS)
        if let answer {
            let time = recorder.now
            recorder.downstream.response.recordResponse(answer.head, wire: answer.wire, at: time)
            recorder.downstream.response.recordBody(Array("\(error.status) \(error.reason)\n".utf8))
            recorder.downstream.response.recordEnd(trailers: nil, at: time)
        }
        return recorder.finish(error: problem)
    }

    /// An HTTP/2 request the codec refused (its header list over the limit,
    /// reset with ENHANCE_YOUR_CALM): an exchange record, as the HTTP/1.1
    /// 431 is, with what was kept of the request (pseudo-header fields and
    /// `Intact-Trace`, marked incomplete) and the refusal, so verification
    /// reports a request the client sent and the server never got.
    func refusedStreamRecord(_ exchange: ExchangeID, streamID: Int, request: HTTPRequestHead?,
                             problem: ProxyError) -> ExchangeRecord {
        var recorder = makeRecorder(exchange, tls: currentTLS)
        recorder.downstream.streamID = streamID
        if let request {
            recorder.downstream.request.recordRequest(request, wire: .http2(fields: HTTP2FieldMapping.requestList(request)),
                                                      connectionScheme: currentTLS == nil ? "http" : "https",
                                                      at: recorder.now)
            recorder.traceID = ExchangeRecord.traceID(in: request.fields)
        }
        return recorder.finish(error: problem)
    }

    /// Bytes that are no request (an HTTP/0.9 `GET /`, an unparseable
    /// request line), answered `answered` (400) and closed: a connection
    /// event (`unreadable-request`) quoting what came, since no request
    /// crossed; the failure says why and what the client was told.
    func unreadableRequestRecord(_ exchange: ExchangeID, received: String, answered: Int?,
                                 problem: ProxyError) -> ExchangeRecord {
        var recorder = makeRecorder(exchange, tls: currentTLS)
        let time = recorder.now
        var failure = problem
        if let answered { failure.failure.message += "; answered \(answered)" }
        var record = recorder.finish(error: failure)
        record.connection = RequestlessConnection(outcome: .unreadableRequest, peer: peer, at: time,
                                            tlsVersion: record.legs.first?.tls?.version, received: received)
        return record
    }

    private func makeRecorder(_ exchange: ExchangeID, tls: TLSDetails?) -> ExchangeRecorder {
        let leg = LegRecorder(role: .downstream, connectionID: id, tls: tls,
                              bodyStoreLimit: settings.recording.bodyStoreLimit, digests: settings.recording.contentDigests)
        return ExchangeRecorder(id: exchange, settings: settings.recording, downstream: leg)
    }

    /// The wire form of a response head as the HTTP/1.1 serializer writes it.
    static func http1Wire(_ head: HTTPResponseHead, requestMethod: HTTPMethod) -> HeadDigest.WireForm {
        var serializer = HTTP1Serializer()
        guard let written = try? serializer.writeResponseHead(head, requestMethod: requestMethod) else {
            return .http1(head: [])
        }
        return .http1(head: Array(written.rawHead))
    }
}

extension TLSDetails {
    /// What a ClientHello says, before (or without) a handshake: the SNI
    /// only, as sent (escaped), and what is wrong with it if anything.
    init(_ hello: ClientHelloSummary) {
        self.init(sni: hello.escapedServerNameSent, sniIssue: hello.serverNameIssue)
    }
}

extension HTTP1ParseError {
    /// What the client sent, quoted, when the error is in the request line
    /// itself, so no request could be read at all (an HTTP/0.9 `GET /`, a
    /// binary probe, a line that never ended); nil when a request line was
    /// read and something later was wrong (those are refused requests,
    /// recorded as exchanges).
    var unreadableRequestLine: String? {
        switch self {
        case .invalidRequestLine(let line): return line
        case .invalidMethod(let method): return HTTP1ParseError.quoted(method.utf8)
        case .invalidVersion(let version), .unsupportedVersion(let version): return HTTP1ParseError.quoted(version.utf8)
        case .startLineTooLong(let limit): return "(a line longer than \(limit) bytes)"
        default: return nil
        }
    }
}
