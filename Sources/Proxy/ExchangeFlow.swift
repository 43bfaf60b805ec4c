import Evidence
import HTTP
import TLS

/// One exchange through the proxy, as a sans-io state machine: events in
/// (`ExchangeEvent`), commands out (`ExchangeCommand`). It carries the request
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
/// A value owned by its downstream connection, used on that connection's
/// loop only. After `.finished` it takes no more events (they are ignored).
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
    enum UpstreamLink {
        /// Not asked for (yet).
        case none
        /// Asked for; waiting for `.upstreamOpened` or `.upstreamFailed`.
        case opening
        /// Open, the head sent.
        case open(ConnectionID)
        /// Completed, abandoned or failed; upstream events are ignored.
        case closed
    }

    /// Whether the client's side of the exchange can still take and give bytes.
    enum ClientSide {
        case connected
        /// The client reset the stream or left, or the proxy reset it.
        case gone
    }

    /// A reading direction as last commanded, so a pause or resume is sent only on a change.
    enum Reading {
        case flowing
        case paused
    }

    public let id: ExchangeID
    /// Where the request goes; nil for a request the proxy refuses outright.
    public let target: UpstreamTarget?
    /// The scheme recorded for the client's origin-form requests.
    let clientScheme: String
    /// The client's HTTP/1.1 request asked to switch protocols (`Upgrade`
    /// named in `Connection`): a 101 may answer it. Set by `start`.
    var upgradeRequested = false
    /// Where an RFC 8441 extended CONNECT's tunnel is (`.none` for any other request).
    var tunnel = Tunnel.none
    /// The extended CONNECT as it went upstream (translated to an HTTP/1.1
    /// `Upgrade` when the upstream speaks HTTP/1.1), to check the 101 against.
    var tunnelRequest: HTTPRequestHead?
    /// The bytes an open tunnel carried, per leg and direction (digested
    /// with the recording's function); made when an extended CONNECT asks
    /// for a tunnel, so other exchanges allocate no running digests.
    var tunnelTraffic: RelayTraffic?
    /// The client spoke HTTP/1.0: no interim (1xx) response may be sent to
    /// it (RFC 9110 §15.2). Set by `start`.
    var clientIsHTTP10 = false
    /// How the client framed its request body (`HTTPServerStream.requestBodyFraming`).
    let clientFraming: HTTP1Framing
    let hooks: [any ExchangeHook]
    /// The wall clock of the recorded timings.
    let clock: @Sendable () -> Timestamp
    var recorder: ExchangeRecorder
    var requestLeg = RequestLeg.awaitingHead
    var responseLeg = ResponseLeg.awaitingHead
    var upstream = UpstreamLink.none
    var client = ClientSide.connected
    var requestReading = Reading.flowing
    var responseReading = Reading.flowing
    /// Hook outputs of each message waiting for a delay or a throttle's pause.
    var requestPacer = MessagePacer<HTTPRequestHead>()
    var responsePacer = MessagePacer<HTTPResponseHead>()
    var upstreamWritable = true
    var clientWritable = true
    /// The first failure; it is what the record says.
    var error: ProxyError?
    /// What is kept to send the request again if the upstream never processed it.
    var replay = UpstreamReplay()
    public private(set) var isFinished = false

    /// True while a hook's stall keeps the client waiting (the exchange ends when the client leaves).
    public var isStalled: Bool {
        if case .stalled = responseLeg { return true }
        return false
    }

    /// The downstream stream an exchange arrived on.
    public struct ClientStream: Sendable {
        public var connection: ConnectionID
        /// The HTTP/2 stream id; nil for HTTP/1.1.
        public var streamID: Int?
        /// The client connection's TLS session; nil over plain TCP.
        public var tls: TLSConnectionInfo?
        /// How the request body is delimited (HTTP/1.1 terms; for HTTP/2 `.none`
        /// when HEADERS ended the stream, `.chunked` when the length is unknown).
        public var bodyFraming: HTTP1Framing

        public init(connection: ConnectionID, streamID: Int? = nil, tls: TLSConnectionInfo? = nil,
                    bodyFraming: HTTP1Framing = .none) {
            self.connection = connection
            self.streamID = streamID
            self.tls = tls
            self.bodyFraming = bodyFraming
        }

        /// `https` over TLS, else `http`: the scheme recorded for origin-form requests.
        var scheme: String { tls == nil ? "http" : "https" }
    }

    /// Makes the flow of a request whose head just arrived. Call `start(_:wire:)`
    /// next, or `refuse(_:wire:status:error:)` for a request that goes nowhere.
    public init(id: ExchangeID, target: UpstreamTarget?, client: ClientStream, hooks: [any ExchangeHook],
                settings: RecordingSettings) {
        self.id = id
        self.target = target
        self.hooks = hooks
        clock = settings.clock
        let leg = LegRecorder(role: .downstream, connectionID: client.connection, streamID: client.streamID,
                              tls: client.tls.map { TLSDetails($0) }, bodyStoreLimit: settings.bodyStoreLimit,
                              digests: settings.digests)
        recorder = ExchangeRecorder(id: id, settings: settings, downstream: leg)
        clientScheme = client.scheme
        clientFraming = client.bodyFraming
    }

    /// Takes the request head as received and returns the first commands
    /// (usually `.openUpstream`).
    public mutating func start(_ head: HTTPRequestHead, wire: HeadDigest.WireForm) -> [ExchangeCommand] {
        recorder.downstream.request.recordRequest(head, wire: wire, connectionScheme: clientScheme, at: clock())
        recorder.traceID = ExchangeRecord.traceID(in: head.fields)
        upgradeRequested = HopByHop.upgradeToken(head.fields, version: head.version) != nil
        if head.isExtendedConnect {
            tunnel = .asked
            tunnelTraffic = RelayTraffic(digests: recorder.settings.digests)
        }
        clientIsHTTP10 = head.version == .http1_0
        var commands: [ExchangeCommand] = []
        passRequest(.head(head), into: &commands)
        settle(&commands)
        return commands
    }

    /// Answers the client at once without asking upstream (a request the
    /// proxy refuses: a loop, a target it cannot parse), recording `error`.
    public mutating func refuse(_ head: HTTPRequestHead, wire: HeadDigest.WireForm, status: Int,
                                error: ProxyError) -> [ExchangeCommand] {
        recorder.downstream.request.recordRequest(head, wire: wire, connectionScheme: clientScheme, at: clock())
        recorder.traceID = ExchangeRecord.traceID(in: head.fields)
        var commands: [ExchangeCommand] = []
        fail(error, status: status, into: &commands)
        settle(&commands)
        return commands
    }

    /// Handles one event; returns the commands to carry out, in order.
    public mutating func handle(_ event: ExchangeEvent) -> [ExchangeCommand] {
        guard !isFinished else { return [] }
        var commands: [ExchangeCommand] = []
        switch event {
        case .requestBody(let chunk):
            if tunnel.carriesBytes {
                tunnelTraffic?.fromClient.add(chunk)
            } else {
                recorder.downstream.request.recordBody(chunk)
            }
            passRequest(.body(chunk), into: &commands)
        case .requestEnd(let trailers):
            recorder.downstream.request.recordEnd(trailers: trailers, at: clock())
            passRequest(.end(trailers: trailers), into: &commands)
        case .clientGone(let problem):
            clientLeft(problem, into: &commands)
        case let .upstreamOpened(connection, tls, streamID, sent, wire):
            upstreamOpened(connection, tls: tls, streamID: streamID, sent: sent, wire: wire, into: &commands)
        case .upstreamFailed(let problem):
            upstreamFailed(problem, into: &commands)
        case .responseHead(let head, let wire):
            responseHead(head, wire: wire, into: &commands)
        case .responseBody(let chunk):
            guard case .open = upstream else { break }
            if tunnel.carriesBytes {
                tunnelTraffic?.fromServer.add(chunk)
            } else {
                recorder.upstream?.response.recordBody(chunk)
            }
            passResponse(.body(chunk), into: &commands)
        case .responseEnd(let trailers):
            responseEnd(trailers, into: &commands)
        case .responseHeadSent(let head, let wire):
            if !head.isInformational || head.status == 101 {
                recorder.downstream.response.recordResponse(head, wire: wire, at: clock())
            } else {
                recorder.downstream.recordInterim(head, wire: wire, at: clock())
            }
        case .responseEndSent(let trailers):
            if case .sent = responseLeg, !recorder.downstream.response.isEnded {
                recorder.downstream.response.recordEnd(trailers: trailers, at: clock())
            }
        case .upstreamWritable(let writable):
            upstreamWritable = writable
        case .clientWritable(let writable):
            clientWritable = writable
        case .timerFired(.request):
            requestPacer.timerFired()
            releaseRequest(into: &commands)
        case .timerFired(.response):
            responsePacer.timerFired()
            releaseResponse(into: &commands)
        case let .upgradeRelayEnded(downstream, upstream, problem):
            upgradeRelayEnded(downstream: downstream, upstream: upstream, problem)
        }
        settle(&commands)
        return commands
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
    /// (or the client is gone), and the upstream stream is let go.
    mutating func settle(_ commands: inout [ExchangeCommand]) {
        guard !isFinished else { return }
        dropRefusedTunnel()
        adjustReading(&commands)
        // A response that went out is over once the driver reported its head
        // and its end as sent (the record holds them as the engine wrote them),
        // or the client left meanwhile.
        let responseOver: Bool
        switch responseLeg {
        case .sent: responseOver = recorder.downstream.response.hasHead
            && (recorder.downstream.response.isEnded || client == .gone)
        case .broken: responseOver = true
        case .awaitingHead, .streaming, .switched, .stalled: responseOver = false
        }
        let requestOver = recorder.downstream.request.isEnded || client == .gone
        guard responseOver, requestOver else { return }
        abandonUpstream(into: &commands)
        isFinished = true
        if case .open = tunnel, let tunnelTraffic {
            recorder.downstream.relayed = tunnelTraffic.downstream
            recorder.upstream?.relayed = tunnelTraffic.upstream
        }
        var record = recorder.finish(error: error)
        for hook in hooks { hook.finish(&record) }
        commands.append(.finished(record))
    }

    /// Pauses or resumes each reading direction when what it should be changed.
    private mutating func adjustReading(_ commands: inout [ExchangeCommand]) {
        let request: Reading
        switch requestLeg {
        case .opening(let pending, _): request = pending.isEmpty && !requestPacer.isHolding ? .flowing : .paused
        case .forwarding: request = upstreamWritable && !requestPacer.isHolding ? .flowing : .paused
        case .awaitingHead: request = requestPacer.isHolding ? .paused : .flowing
        case .sent, .discarding: request = .flowing
        }
        if request != requestReading, client == .connected, !recorder.downstream.request.isEnded {
            requestReading = request
            commands.append(request == .paused ? .pauseRequestBody : .resumeRequestBody)
        }
        let response: Reading = clientWritable && !responsePacer.isHolding ? .flowing : .paused
        if response != responseReading, case .open = upstream {
            responseReading = response
            commands.append(response == .paused ? .pauseResponseBody : .resumeResponseBody)
        }
    }

    /// Abandons the upstream stream, if the exchange holds one (or is
    /// opening one), and records the upstream leg as broken: why, and how far
    /// it got. A leg still opening is recorded too, without a connection: an
    /// upstream attempt had begun.
    mutating func abandonUpstream(into commands: inout [ExchangeCommand]) {
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
        commands.append(.abandonUpstream)
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
