import Evidence
import HTTP
import TLS

/// One exchange through the proxy, as a sans-io state machine: events in
/// (`ExchangeEvent`), commands out (`ExchangeCommand`, one at a time through
/// `ExchangeActions`, each one's `CommandOutcome` back as its result: a head
/// or end as written is recorded, a full stream pauses the reading that
/// feeds it, in the same step). It carries the request
/// from the client to an upstream stream and the response back, streaming
/// every body chunk as it comes, through the exchange's hooks, while the
/// recorder digests what crossed each leg; it answers the client itself when
/// the upstream cannot, and ends with the exchange's record.
///
/// Hook outputs go through a pacer per message (`MessagePacer`): a delay
/// or a throttled body asks the driver for a timer (`.startTimer`) and
/// holds the message's later outputs until it fires (`.timerFired`).
///
/// Backpressure: reading the request from the client is paused while the
/// upstream stream is being opened and a body chunk already waits, or while
/// it is not writable; reading the response from upstream is paused while
/// the client is not writable. Reading a message also pauses while its
/// pacer holds outputs back. So no body is ever buffered beyond one read.
///
/// A step (`start`, `refuse`, `handle`) issues its commands, then settles;
/// a send that failed during the step is handled at its end, after the
/// commands already issued, as its own follow-up in the order it happened
/// (so every command the step decided on goes out, as if the failure had
/// been reported just after it). A step returns the exchange's record when
/// it finished the exchange.
///
/// A value owned by its downstream connection, mutated in place in the
/// layer's storage, used on that connection's loop only. Once finished it
/// takes no more events (they are ignored).
public struct ExchangeFlow {
    /// The request on its way from the client to the server.
    enum RequestLeg {
        /// The hooks have not passed a head on yet.
        case awaitingHead
        /// The upstream stream is being opened with the head; body parts the
        /// hooks passed on wait here (reading pauses once one waits, so this
        /// holds at most one read). `bodyless`: the head ended the request.
        case opening(pending: [HTTPRequestPart], bodyless: Bool)
        /// Parts go upstream as they come.
        case forwarding
        /// The end went upstream.
        case sent
        /// Nothing more goes upstream (answered, failed, or reset); parts
        /// still arriving from the client are read and dropped.
        case discarding
    }

    /// The response on its way from the server (or the proxy) to the client.
    enum ResponseLeg {
        /// No final head has gone to the client.
        case awaitingHead
        /// A final head went to the client; body parts follow.
        case streaming
        /// A `101 Switching Protocols` went to the client (the request asked
        /// to switch): once upstream's 101 is over (`.relayUpgraded`) both
        /// byte streams are relayed until `.upgradeRelayEnded`.
        case switched
        /// The whole response went out.
        case sent
        /// The client's stream ended before the response was whole.
        case broken
        /// A hook stalled the exchange: nothing goes to the client, and the
        /// exchange ends only when the client leaves.
        case stalled
    }

    /// The exchange's hold on an upstream stream.
    ///
    /// Invariants: it moves none → opening → open → closed, and back from
    /// opening or open to opening only for a retry (a fresh stream, so a
    /// fresh `.open`); only an open stream is written to, read from, paused
    /// or resumed, so its writability and its reading live in `.open` alone.
    enum UpstreamLink {
        /// Not asked for (yet).
        case none
        /// Asked for; waiting for `.upstreamOpened` or `.upstreamFailed`.
        case opening
        /// Open, the head sent, on `connection`. `writable`: the stream took
        /// the last body part (false from a `.full` send until
        /// `.upstreamWritable`); `reading`: the response's reading as last
        /// commanded (a fresh stream flows).
        case open(ConnectionID, writable: Bool, reading: Reading)
        /// Completed, abandoned or failed; upstream events are ignored.
        case closed

        /// False only while an open stream is full: the request's reading then pauses.
        var isWritable: Bool {
            if case .open(_, let writable, _) = self { return writable }
            return true
        }
    }

    /// Whether the client's side of the exchange can still take and give bytes.
    ///
    /// Invariants: connected → gone, never back; only a connected client is
    /// sent to or read from, so its writability and the request's reading
    /// live in `.connected` alone.
    enum ClientSide {
        /// `writable`: the client's stream took the last response part
        /// (false from a `.full` send until `.clientWritable`); `reading`:
        /// the request's reading as last commanded.
        case connected(writable: Bool, reading: Reading)
        /// The client reset the stream or left, or the proxy reset it.
        case gone

        /// A client stream as an exchange starts: it takes bytes, and its request flows.
        static let fresh = ClientSide.connected(writable: true, reading: .flowing)

        /// Whether the client can still be sent to and read from.
        var isConnected: Bool {
            if case .connected = self { return true }
            return false
        }

        /// False only while a connected client's stream is full: the response's reading then pauses.
        var isWritable: Bool {
            if case .connected(let writable, _) = self { return writable }
            return true
        }
    }

    /// A reading direction as last commanded, so a pause or resume is sent only on a change.
    enum Reading {
        case flowing
        case paused
    }

    /// A command of this step that came back `.failed`.
    enum FailedSend {
        /// Sending to the client: its stream is gone.
        case client(ProxyError)
        /// Sending upstream: the driver let go of the stream.
        case upstream(ProxyError)
        /// Taking both connections for the relay after a 101.
        case relay(ProxyError)
    }

    public let id: ExchangeID
    /// Where the request goes; nil for a request the proxy refuses outright.
    public let target: UpstreamTarget?
    /// The scheme recorded for the client's origin-form requests.
    let clientScheme: String
    /// A request that names no authority goes upstream with the target's
    /// (`HopByHop.shapeRequest`): a reverse proxy's flows.
    let suppliesAuthority: Bool
    /// The client's HTTP/1.1 request asked to switch protocols (`Upgrade`
    /// named in `Connection`): a 101 may answer it. Set by `start`.
    var upgradeRequested = false
    /// Where an RFC 8441 extended CONNECT's tunnel is (`.none` for any other
    /// request), with what it sent and carried.
    var tunnel = Tunnel.none
    /// The client spoke HTTP/1.0: no interim (1xx) response may be sent to
    /// it (RFC 9110 §15.2). Set by `start`.
    var clientIsHTTP10 = false
    /// How the client framed its request body (`HTTPServerStream.requestBodyFraming`).
    let clientFraming: HTTP1Framing
    /// The client may wait for a `100 Continue` (`ClientStream.expectsContinue`).
    let clientExpectsContinue: Bool
    let hooks: [any ExchangeHook]
    /// Every hook only watches (`ExchangeHook.onlyWatches`; true with none):
    /// a part whose message has nothing held goes its way with no output list.
    let hooksOnlyWatch: Bool
    /// The wall clock of the recorded timings.
    let clock: @Sendable () -> Timestamp
    var recorder: ExchangeRecorder
    var requestLeg = RequestLeg.awaitingHead
    var responseLeg = ResponseLeg.awaitingHead
    var upstream = UpstreamLink.none
    var client = ClientSide.fresh
    /// Hook outputs of each message waiting for a delay or a throttle's pause.
    var requestPacer = MessagePacer<HTTPRequestHead>()
    var responsePacer = MessagePacer<HTTPResponseHead>()
    /// The first failure; it is what the record says.
    var error: ProxyError?
    /// What is kept to send the request again if the upstream never processed it.
    var replay = UpstreamReplay()
    /// Sends that failed during the current step, in order; handled at its
    /// end (`endStep`). Empty between steps.
    var failedSends: [FailedSend] = []
    public private(set) var isFinished = false

    /// True while a hook's stall keeps the client waiting (the exchange ends when the client leaves).
    public var isStalled: Bool {
        if case .stalled = responseLeg { return true }
        return false
    }

    /// The downstream stream an exchange arrived on. Its optional properties
    /// are spelled `Optional<…>` so the initialiser does not copy it out whole
    /// (see `HTTPRequestHead`).
    public struct ClientStream: Sendable {
        public var connection: ConnectionID
        /// The HTTP/2 stream id; nil for HTTP/1.1.
        public var streamID: Optional<Int>
        /// The client connection's TLS session as records show it (made once
        /// per connection); nil over plain TCP.
        public var tls: Optional<TLSDetails>
        /// How the request body is delimited (HTTP/1.1 terms; for HTTP/2 `.none`
        /// when HEADERS ended the stream, `.chunked` when the length is unknown).
        public var bodyFraming: HTTP1Framing
        /// The client may wait for a `100 Continue` before it sends the body
        /// (`Expect: 100-continue`, as its codec read it).
        public var expectsContinue: Bool

        public init(connection: ConnectionID, streamID: Int? = nil, tls: TLSDetails? = nil,
                    bodyFraming: HTTP1Framing = .none, expectsContinue: Bool = false) {
            self.connection = connection
            self.streamID = streamID
            self.tls = tls
            self.bodyFraming = bodyFraming
            self.expectsContinue = expectsContinue
        }

        /// `https` over TLS, else `http`: the scheme recorded for origin-form requests.
        /// (A pattern, not `tls == nil`, which copies the stream to compare.)
        var scheme: String {
            if case .some = tls { return "https" }
            return "http"
        }
    }

    /// Makes the flow of a request whose head just arrived. Call `start(_:wire:)`
    /// next, or `refuse(_:wire:status:error:)` for a request that goes nowhere.
    /// `client` is consumed: its TLS details move into the downstream leg.
    /// `headMemos`: the client connection's (`HeadDigestMemos(acrossExchanges: true)`),
    /// or nil for memos of this exchange only.
    public init(id: ExchangeID, target: UpstreamTarget?, client: consuming ClientStream, hooks: [any ExchangeHook],
                settings: RecordingSettings, suppliesAuthority: Bool = false, headMemos: HeadDigestMemos? = nil) {
        self.id = id
        self.target = target
        self.suppliesAuthority = suppliesAuthority
        self.hooks = hooks
        hooksOnlyWatch = hooks.allSatisfy(\.onlyWatches)
        clock = settings.clock
        clientScheme = client.scheme
        clientFraming = client.bodyFraming
        clientExpectsContinue = client.expectsContinue
        let leg = LegRecorder(role: .downstream, connectionID: client.connection, streamID: client.streamID,
                              tls: client.tls.take(), bodyStoreLimit: settings.bodyStoreLimit,
                              digests: settings.contentDigests, headMemos: headMemos)
        recorder = ExchangeRecorder(id: id, settings: settings, downstream: leg)
    }

    /// Takes the request head as received and issues the first commands
    /// (usually `.openUpstream`); returns the record if that ended the exchange.
    public mutating func start(_ head: HTTPRequestHead, wire: HeadDigest.WireForm,
                               _ io: any ExchangeActions) -> ExchangeRecord? {
        recorder.downstream.request.recordRequest(head, wire: wire, connectionScheme: clientScheme, at: clock())
        recorder.traceID = ExchangeRecord.traceID(in: head.fields)
        upgradeRequested = HopByHop.upgradeToken(head.fields, version: head.version) != nil
        if head.isExtendedConnect {
            tunnel = .asked(sent: nil, traffic: RelayTraffic(digests: recorder.settings.digests))
        }
        clientIsHTTP10 = head.version == .http1_0
        passRequest(.head(head), io)
        return endStep(io)
    }

    /// Answers the client at once without asking upstream (a request the
    /// proxy refuses: a loop, a target it cannot parse), recording `error`;
    /// returns the record if that ended the exchange.
    public mutating func refuse(_ head: HTTPRequestHead, wire: HeadDigest.WireForm, status: Int,
                                error: ProxyError, _ io: any ExchangeActions) -> ExchangeRecord? {
        recorder.downstream.request.recordRequest(head, wire: wire, connectionScheme: clientScheme, at: clock())
        recorder.traceID = ExchangeRecord.traceID(in: head.fields)
        fail(error, status: status, io)
        return endStep(io)
    }

    /// Handles one event, issuing its commands in order through `io`;
    /// returns the record if the exchange finished.
    public mutating func handle(_ event: ExchangeEvent, _ io: any ExchangeActions) -> ExchangeRecord? {
        guard !isFinished else { return nil }
        switch event {
        case .requestBody(let chunk):
            if !tunnel.carry(chunk, \.fromClient) {
                recorder.downstream.request.recordBody(chunk)
            }
            passRequest(.body(chunk), io)
        case .requestEnd(let trailers):
            recorder.downstream.request.recordEnd(trailers: trailers, at: clock())
            passRequest(.end(trailers: trailers), io)
        case .clientGone(let problem):
            clientLeft(problem, io)
        case let .upstreamOpened(connection, tls, streamID, sent, wire):
            upstreamOpened(connection, tls: tls, streamID: streamID, sent: sent, wire: wire, io)
            // An HTTP/2 origin answers no `Expect: 100-continue` (the body flows under flow
            // control): a client that may wait for a 100 gets the proxy's own, and the record shows it.
            if sent.version == .http2, clientExpectsContinue {
                clientSendOutcome(io.perform(.sendContinueIfOwed, for: id))
            }
        case .upstreamFailed(let problem):
            upstreamFailed(problem, io)
        case .responseHead(let head, let wire):
            responseHead(head, wire: wire, io)
        case .responseBody(let chunk):
            guard case .open = upstream else { break }
            if !tunnel.carry(chunk, \.fromServer) {
                recorder.upstream?.response.recordBody(chunk)
            }
            passResponse(.body(chunk), io)
        case .responseEnd(let trailers):
            responseEnd(trailers, io)
        case .upstreamWritable:
            if case .open(let connection, _, let reading) = upstream {
                upstream = .open(connection, writable: true, reading: reading)
            }
        case .clientWritable:
            if case .connected(_, let reading) = client { client = .connected(writable: true, reading: reading) }
        case .timerFired(.request):
            requestPacer.timerFired()
            releaseRequest(io)
        case .timerFired(.response):
            responsePacer.timerFired()
            releaseResponse(io)
        case let .upgradeRelayEnded(downstream, upstream, problem):
            upgradeRelayEnded(downstream: downstream, upstream: upstream, problem)
        }
        return endStep(io)
    }

    /// Ends a step: settles, then handles each send that failed during it,
    /// in order (each settling again), until none is left or the exchange
    /// finished; returns the record if it did.
    private mutating func endStep(_ io: any ExchangeActions) -> ExchangeRecord? {
        var record = settle(io)
        // A pattern, not `record == nil`: that comparison is generic over
        // the Optional and copies a finished record whole (every field
        // retained, then released) only to look at its tag.
        while case .none = record, !failedSends.isEmpty {
            switch failedSends.removeFirst() {
            case .client(let problem): clientLeft(problem, io)
            case .upstream(let problem): upstreamFailed(problem, io)
            case .relay(let problem): upgradeRelayEnded(downstream: nil, upstream: nil, problem)
            }
            record = settle(io)
        }
        if !failedSends.isEmpty { failedSends = [] }
        return record
    }

    // MARK: Outcomes

    /// Acts on what a send to the client came to: a head or the end as
    /// written goes into the record, a full stream pauses reading the
    /// response (`adjustReading`), a failure waits for the step's end.
    mutating func clientSendOutcome(_ outcome: CommandOutcome) {
        switch outcome {
        case .done:
            break
        case .full:
            if case .connected(_, let reading) = client { client = .connected(writable: false, reading: reading) }
        case .headSent(let head, let wire):
            if !head.isInformational || head.status == 101 {
                recorder.downstream.response.recordResponse(head, wire: wire, at: clock())
            } else {
                recorder.downstream.recordInterim(head, wire: wire, at: clock())
            }
        case .endSent(let trailers):
            if case .sent = responseLeg, !recorder.downstream.response.isEnded {
                recorder.downstream.response.recordEnd(trailers: trailers, at: clock())
            }
        case .failed(let problem):
            failedSends.append(.client(problem))
        }
    }

    /// Acts on what a send upstream came to: a full stream pauses reading
    /// the request, a failure waits for the step's end.
    mutating func upstreamSendOutcome(_ outcome: CommandOutcome) {
        switch outcome {
        case .full:
            if case .open(let connection, _, let reading) = upstream {
                upstream = .open(connection, writable: false, reading: reading)
            }
        case .failed(let problem): failedSends.append(.upstream(problem))
        case .done, .headSent, .endSent: break
        }
    }

    // MARK: Ending

    /// Records the first failure and tells the hooks.
    mutating func noteFailure(_ problem: ProxyError) {
        guard error == nil else { return }
        error = problem
        for hook in hooks { hook.failed(problem) }
    }

    /// Adjusts reading to the state, then finishes when nothing is left to
    /// do: the response went out (or cannot), the client's request is over
    /// (or the client is gone), and the upstream stream is let go. Returns
    /// the record when it finished the exchange.
    mutating func settle(_ io: any ExchangeActions) -> ExchangeRecord? {
        guard !isFinished else { return nil }
        dropRefusedTunnel()
        adjustReading(io)
        // A response that went out is over once its head and its end came
        // back as sent (the record holds them as the engine wrote them), or
        // the client left meanwhile.
        let responseOver: Bool
        switch responseLeg {
        case .sent: responseOver = recorder.downstream.response.hasHead
            && (recorder.downstream.response.isEnded || !client.isConnected)
        case .broken: responseOver = true
        case .awaitingHead, .streaming, .switched, .stalled: responseOver = false
        }
        let requestOver = recorder.downstream.request.isEnded || !client.isConnected
        guard responseOver, requestOver else { return nil }
        abandonUpstream(io)
        isFinished = true
        if case .open(let traffic) = tunnel {
            recorder.downstream.relayed = traffic.downstream
            recorder.upstream?.relayed = traffic.upstream
        }
        var record = recorder.finish(error: error)
        for hook in hooks { hook.finish(&record) }
        return record
    }

    /// Pauses or resumes each reading direction when what it should be changed.
    private mutating func adjustReading(_ io: any ExchangeActions) {
        let request: Reading
        switch requestLeg {
        case .opening(let pending, _): request = pending.isEmpty && !requestPacer.isHolding ? .flowing : .paused
        case .forwarding: request = upstream.isWritable && !requestPacer.isHolding ? .flowing : .paused
        case .awaitingHead: request = requestPacer.isHolding ? .paused : .flowing
        case .sent, .discarding: request = .flowing
        }
        if case .connected(let writable, let reading) = client, request != reading, !recorder.downstream.request.isEnded {
            client = .connected(writable: writable, reading: request)
            io.perform(request == .paused ? .pauseRequestBody : .resumeRequestBody, for: id)
        }
        let response: Reading = client.isWritable && !responsePacer.isHolding ? .flowing : .paused
        if case .open(let connection, let writable, let reading) = upstream, response != reading {
            upstream = .open(connection, writable: writable, reading: response)
            io.perform(response == .paused ? .pauseResponseBody : .resumeResponseBody, for: id)
        }
    }

    /// Abandons the upstream stream, if the exchange holds one (or is
    /// opening one), and records the upstream leg as broken: why, and how far
    /// it got. A leg still opening is recorded too, without a connection: an
    /// upstream attempt had begun.
    mutating func abandonUpstream(_ io: any ExchangeActions) {
        let stage: String
        switch upstream {
        case .opening:
            stage = "before the upstream connection was ready"
        case .open:
            if case .sent = requestLeg {
                stage = "before the response was completely read"
            } else {
                stage = "before the request was completely sent"
            }
        case .none, .closed:
            return
        }
        recorder.breakUpstream("\(abandonCause) \(stage)")
        io.perform(.abandonUpstream, for: id)
        upstream = .closed
    }

    /// Why the exchange lets go of its upstream, in words for the record.
    private var abandonCause: String {
        if recorder.upstream?.response.isEnded == true { return "the server answered" }
        guard let error else { return "the proxy answered the client itself" }
        switch (error.failure.side, error.failure.kind) {
        case (.client?, .reset), (.client?, .closedEarly), (.client?, .timeout): return "the client left (\(error))"
        case (.client?, _): return "the client's request failed (\(error))"
        default: return "the exchange failed (\(error))"
        }
    }
}
