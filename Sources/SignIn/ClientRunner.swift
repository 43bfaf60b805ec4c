import AuthFlow
import Browser
import Dispatch
import Evidence
import Foundation
import HTTP
import TLS
import Transport
import Wire

/// The mobile client simulator on real connections: runs a `SignInFlow`
/// (the app and its built-in browser, each with its own cookie jar and its
/// own connections, as on a phone) against a server, directly or through a
/// forward proxy, and records its own view of every exchange.
///
/// ```swift
/// let runner = try ClientRunner(configuration: configuration, recorder: recorder)
/// runner.run(onStep: { print(FlowReport.step($0, number: …)) }) { outcome in … }
/// // or: let outcome = runner.runAndWait()   /   let outcome = await runner.run()
/// ```
///
/// A runner runs once. Everything happens on its loop: the flow, both
/// agents' HTTP clients, the per-exchange timer. Transport failures become
/// `SignInFlow.fail` (a TLS failure over a client certificate gives the
/// `client-cert-required` diagnosis).
///
/// `@unchecked Sendable`: `configuration`, `recorder`, `loop` and `tls` are
/// immutable; every other property is touched only on `loop`.
public final class ClientRunner: @unchecked Sendable {
    public let configuration: Configuration
    public let recorder: TapRecorder?
    public let loop: EventLoop
    private let tls: HTTPClientTLS
    /// The simulated browser's TLS (its own client certificate, or none), when it differs from the app's.
    private let browserTLS: HTTPClientTLS?
    var flow: SignInFlow
    /// Chromium while it plays steps 6–8 (`ClientRunner+Browser`).
    var realBrowser: ChromiumBrowser?
    /// Each agent's HTTP client (its connections); the browser's closes at step 8.
    private var clients: [FlowAgent: HTTPClient] = [:]
    private var lastAgent: FlowAgent?
    private var inFlight: InFlight?
    var exchangeNumber = 0
    var onStep: (@Sendable (StepResult) -> Void)?
    private var completion: (@Sendable (FlowOutcome) -> Void)?

    /// The exchange waiting for its response.
    private struct InFlight {
        let number: Int
        let request: FlowRequest
        let sent: Timestamp
        let clock: ContinuousClock.Instant
        let timer: LoopTimer
    }

    /// Makes the TLS context (trust roots, ALPN offer, client certificate);
    /// throws when the trust roots cannot be read. Runs on `loop` (one of its
    /// own when nil).
    public init(configuration: Configuration, recorder: TapRecorder? = nil, loop: EventLoop? = nil) throws(TLSError) {
        self.configuration = configuration
        self.recorder = recorder
        self.loop = loop ?? EventLoop(label: "intact.client")
        tls = try HTTPClientTLS(trustRoots: configuration.trust, identity: configuration.clientIdentity,
                                protocols: configuration.protocols.choice)
        switch configuration.browserIdentity {
        case .sameAsApp: browserTLS = nil
        case .none: browserTLS = try HTTPClientTLS(trustRoots: configuration.trust, protocols: configuration.protocols.choice)
        case .identity(let identity):
            browserTLS = try HTTPClientTLS(trustRoots: configuration.trust, identity: identity, protocols: configuration.protocols.choice)
        }
        var flowConfiguration = configuration.flow
        flowConfiguration.holdsClientCertificate = configuration.clientIdentity != nil
        flowConfiguration.clientCertificateThroughForwardProxy = configuration.proxy != nil && configuration.clientIdentity != nil
        flow = SignInFlow(configuration: flowConfiguration)
    }

    /// Runs the flow; `onStep` gets each exchange's result as it completes,
    /// `completion` the outcome. Both run on the loop. Callable from any thread, once.
    public func run(onStep: @escaping @Sendable (StepResult) -> Void = { _ in },
                    completion: @escaping @Sendable (FlowOutcome) -> Void) {
        loop.execute { [self] in
            precondition(self.completion == nil && exchangeNumber == 0, "a ClientRunner runs once")
            self.onStep = onStep
            self.completion = completion
            sendNext()
        }
    }

    /// `run`, waiting for the outcome. Blocks: never call on a loop queue.
    public func runAndWait(onStep: @escaping @Sendable (StepResult) -> Void = { _ in }) -> FlowOutcome {
        let done = DispatchSemaphore(value: 0)
        let result = OutcomeBox()
        run(onStep: onStep) { outcome in
            result.outcome = outcome
            done.signal()
        }
        done.wait()
        guard let outcome = result.outcome else { preconditionFailure("completion sets the outcome before signalling") }
        return outcome
    }

    /// `run` for async callers.
    public func run(onStep: @escaping @Sendable (StepResult) -> Void = { _ in }) async -> FlowOutcome {
        await withCheckedContinuation { continuation in
            run(onStep: onStep) { continuation.resume(returning: $0) }
        }
    }

    // MARK: On the loop

    func sendNext() {
        loop.assertOnLoop()
        switch flow.next() {
        case .finished(let finished):
            let outcome = BrowserSteps.attributingToSplit(finished, paths: paths)
            for client in clients.values { client.close() }
            clients = [:]
            let completion = self.completion
            self.completion = nil
            self.onStep = nil
            completion?(outcome)
        case .send(let request):
            send(request)
        }
    }

    private func send(_ request: FlowRequest) {
        if lastAgent == .browser && request.agent == .app {
            // Step 8: the app closes the browser, and with it the browser's connections.
            clients.removeValue(forKey: .browser)?.close()
        }
        lastAgent = request.agent
        if request.agent == .browser, case .chromium(let settings) = configuration.browser, flow.awaitsBrowserLoginPage {
            return runRealBrowser(settings, for: request)
        }
        let client = clients[request.agent] ?? HTTPClient(loop: loop)
        clients[request.agent] = client
        let endpoint = self.endpoint(for: request)
        exchangeNumber += 1
        let number = exchangeNumber
        let timer = loop.schedule(after: configuration.exchangeTimeout) { [self] in timedOut(number) }
        inFlight = InFlight(number: number, request: request, sent: .now(), clock: .now, timer: timer)
        client.send(request.head, body: request.body, to: endpoint) { [self] result in
            completed(number, result)
        }
    }

    /// Where `request` goes: its origin (or the address `--resolve` gives
    /// its name, TLS keeping the name), through the agent's proxy if any.
    private func endpoint(for request: FlowRequest) -> HTTPEndpoint {
        let origin = request.url.origin
        let port = UInt16(origin.port ?? 443)
        var agentTLS = request.agent == .browser ? browserTLS ?? tls : tls
        let proxy = proxy(for: request.agent).map { proxy in
            HTTPProxyAddress(host: configuration.resolve.address(host: proxy.host, port: UInt16(proxy.port)) ?? proxy.host,
                             port: UInt16(proxy.port))
        }
        var host = origin.host
        // Through a proxy the proxy resolves the target, as with curl.
        if proxy == nil, let address = configuration.resolve.address(host: origin.host, port: port) {
            host = address
            agentTLS.serverName = origin.host
        }
        return HTTPEndpoint(host: host, port: port, tls: agentTLS, proxy: proxy, protocolChoice: configuration.protocols.choice)
    }

    private func completed(_ number: Int, _ result: Result<HTTPClientResponse, TransportError>) {
        guard let exchange = inFlight, exchange.number == number else { return }
        inFlight = nil
        exchange.timer.cancel()
        let elapsed = seconds(since: exchange.clock)
        switch result {
        case .success(let response):
            flow.receive(response.head, body: response.body, elapsed: elapsed, now: Date())
            record(exchange, response: response, error: nil)
        case .failure(let error):
            flow.fail(error.flowFailure, elapsed: elapsed)
            record(exchange, response: nil, error: error.recordedFailure(at: "client exchange"))
        }
        stepDone()
    }

    private func timedOut(_ number: Int) {
        guard let exchange = inFlight, exchange.number == number else { return }
        inFlight = nil
        // Drop the agent's connections: the late answer, if any, must not reach the flow,
        // and the peer learns at once that the request was given up (a reset, not a wait).
        clients.removeValue(forKey: exchange.request.agent)?.close(resetting: true)
        flow.fail(.timedOut, elapsed: seconds(since: exchange.clock))
        record(exchange, response: nil, error: ExchangeRecord.Failure(
            kind: .timeout, location: "client exchange",
            message: "no complete response within \(configuration.exchangeTimeout)"))
        stepDone()
    }

    func stepDone() {
        if let result = flow.results.last { onStep?(result) }
        sendNext()
    }

    func seconds(since start: ContinuousClock.Instant) -> TimeInterval {
        let duration = ContinuousClock.now - start
        return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Records the exchange as the client saw it: the request as sent, the
    /// response as received. Without a response the transport did not say
    /// whether or how the request went out, so only the failure is recorded.
    private func record(_ exchange: InFlight, response: HTTPClientResponse?, error: ExchangeRecord.Failure?) {
        guard let recorder else { return }
        let settings = recorder.settings
        var recordedRequest: RecordedMessage?
        var recordedResponse: RecordedMessage?
        if let response {
            var request = MessageObservation(request: response.request.travelled(as: response.requestWire),
                                             wire: response.requestWire, connectionScheme: "https",
                                             storeLimit: settings.bodyStoreLimit, using: settings.redaction.digests,
                                             start: exchange.sent, headersDone: exchange.sent)
            request.append(exchange.request.body)
            recordedRequest = request.finish(end: exchange.sent, redaction: settings.redaction)
            var observation = MessageObservation(response: response.head, wire: response.wire,
                                                 storeLimit: settings.bodyStoreLimit, using: settings.redaction.digests,
                                                 start: nil, headersDone: nil)
            for chunk in response.bodyChunks { observation.append(chunk) }
            recordedResponse = observation.finish(trailers: response.trailers, end: .now(), redaction: settings.redaction)
        }
        recorder.record(traceID: exchange.request.traceID, step: flow.results.last?.label.rawValue,
                        connectionID: "\(configuration.flow.traceRunID ?? "run")-\(exchange.request.agent.rawValue)",
                        tls: nil, request: recordedRequest, response: recordedResponse, error: error)
    }
}

/// Carries the outcome from the loop to the thread waiting in `runAndWait`;
/// written before the semaphore is signalled and read after the wait.
private final class OutcomeBox: @unchecked Sendable {
    var outcome: FlowOutcome?
}
