import Foundation
import HTTP
import Hashing

/// The mobile client simulator as a sans-io state machine: it runs the
/// table of `AUTH_FLOW.md` — the app and its built-in browser, each with
/// its own cookie jar — and says what to send; a driver sends it (directly,
/// through a proxy, or to an in-memory `MockServer`) and passes back what
/// came back.
///
/// Driving it:
/// ```swift
/// var flow = SignInFlow(configuration: config)
/// while case .send(let request) = flow.next() {
///     // send request.head + request.body to request.url …
///     flow.receive(responseHead, body: responseBody, elapsed: seconds)   // or flow.fail(.timedOut, …)
/// }
/// guard case .finished(let outcome) = flow.next() else { … }
/// ```
/// `next()` does not change state: it keeps returning the same request
/// until `receive` or `fail` answers it. Interim (1xx) responses are ignored;
/// answers after the run finished are ignored. A value type: keep it on one
/// queue.
public struct SignInFlow: Sendable {
    /// The trace field every request carries unless tracing is off (`VERIFY.md`).
    public static let traceFieldName = "Intact-Trace"

    /// What a run does.
    public struct Configuration: Hashable, Sendable {
        /// The protected resource of step 1 and of the follow-up (`https://host/suite/rest/…`).
        public var resourceURL: AbsoluteURL
        /// The `scheme` query parameter of the login URL (default `com.appian.tempo`).
        public var callbackScheme: String
        public var username: String
        public var password: String
        /// The token POST body (*synthetic*; must match the server's).
        public var tokenPost: TokenPostFormat
        /// The follow-up's method; unsafe methods carry `X-APPIAN-CSRF-TOKEN`.
        public var followUpMethod: String
        /// Trace ids are `<traceRunID>-<sequence>`; nil turns the trace field off.
        public var traceRunID: String?
        /// True when the server is Intact's mock server, which echoes the
        /// trace field: a response without the echo then proves an
        /// intermediary answered. Leave false against a real server.
        public var expectsTraceEcho: Bool
        /// A fixed PKCE verifier for reproducible runs; nil makes a fresh one.
        public var codeVerifier: String?
        /// Fields every request carries after `Host`, `Accept` and `Cookie`:
        /// by default `Accept-Encoding: gzip` and a `User-Agent`, as the HTTP
        /// stacks of mobile apps send them. A gzip answer the app asked for
        /// is decoded before it is checked.
        public var requestFields: [HTTPField]
        /// True when the app holds a client certificate to present (the
        /// driver sets it: `ClientRunner` from its identity). An
        /// intermediary's answer that its own TLS connection onward failed
        /// then points at a certificate that cannot cross it.
        public var holdsClientCertificate = false
        /// The app presents a client certificate and reaches the server
        /// through a forward proxy (`intact client --client-cert … --proxy …`):
        /// a TLS-intercepting proxy can neither ask for nor relay it, so a
        /// `client-cert-required` says where the certificate must go instead.
        public var clientCertificateThroughForwardProxy = false

        /// What a mobile HTTP stack sends on every request unless told otherwise.
        public static let defaultRequestFields = [HTTPField(name: "Accept-Encoding", value: "gzip"),
                                                  HTTPField(name: "User-Agent", value: "Intact-Client/1 (mobile sign-in simulator)")]

        public init(resourceURL: AbsoluteURL, callbackScheme: String = "com.appian.tempo",
                    username: String = MockUser.demo.username, password: String = MockUser.demo.password,
                    tokenPost: TokenPostFormat = TokenPostFormat(), followUpMethod: String = "GET",
                    traceRunID: String? = Encoding.hex(SecureRandom.bytes(6)), expectsTraceEcho: Bool = false,
                    codeVerifier: String? = nil, requestFields: [HTTPField] = Configuration.defaultRequestFields) {
            self.resourceURL = resourceURL
            self.callbackScheme = callbackScheme
            self.username = username
            self.password = password
            self.tokenPost = tokenPost
            self.followUpMethod = followUpMethod
            self.traceRunID = traceRunID
            self.expectsTraceEcho = expectsTraceEcho
            self.codeVerifier = codeVerifier
            self.requestFields = requestFields
        }

        /// `<traceRunID>-<sequence>`, or nil when tracing is off.
        func traceID(sequence: Int) -> String? {
            traceRunID.map { "\($0)-\(sequence)" }
        }
    }

    /// What step 3 said.
    struct Challenge: Hashable, Sendable {
        let contextURL: AbsoluteURL
        let tokenURL: AbsoluteURL
    }

    /// What step 5 made.
    struct Proof: Hashable, Sendable {
        let verifier: String
        let challenge: String
    }

    /// Where the run is. Each waiting state holds the request in flight and
    /// exactly what the later steps need.
    enum State: Sendable {
        case protectedRequest(FlowRequest)
        case loginPage(FlowRequest, Challenge, Proof)
        case credentials(FlowRequest, Challenge, Proof, challengeConfirmed: Bool)
        case tokenExchange(FlowRequest, Challenge, challengeConfirmed: Bool)
        case followUp(FlowRequest)
        case finished(FlowOutcome)

        var action: FlowAction {
            switch self {
            case .protectedRequest(let r), .loginPage(let r, _, _), .credentials(let r, _, _, _),
                 .tokenExchange(let r, _, _), .followUp(let r):
                return .send(r)
            case .finished(let outcome):
                return .finished(outcome)
            }
        }

        var pendingRequest: FlowRequest? {
            if case .send(let request) = action { return request }
            return nil
        }
    }

    public let configuration: Configuration
    let classifier: StepClassifier
    var state: State
    /// The app's cookies (kept for the whole run).
    public internal(set) var appJar = CookieJar()
    /// The browser's cookies (dropped at step 8).
    public internal(set) var browserJar = CookieJar()
    public internal(set) var results: [StepResult] = []
    /// The user the bootstrap named.
    var username: String?
    var sequence = 0
    /// What the server's own answers so far showed of it (`ServerEvidence`).
    var serverEvidence = ServerEvidence()
    /// The answers of the run so far, by their request's trace id, so a copy
    /// of one served again (a cache) is named (`SignInFlow+CachedCopies`).
    var answered: [String: AnsweredRequest] = [:]
    /// When the answer being checked arrived.
    var receivedAt = Date(timeIntervalSince1970: 0)

    public init(configuration: Configuration) {
        self.configuration = configuration
        classifier = StepClassifier(contextPath: SignInFlow.contextPath(ofResource: configuration.resourceURL.path))
        // Step 1, with no cookies: the jars are still empty.
        sequence = 1
        state = .protectedRequest(SignInFlow.buildRequest(.protectedRequest, agent: .app, method: "GET",
                                                          url: configuration.resourceURL, accept: "application/json",
                                                          extraFields: configuration.requestFields.map { ($0.name, $0.value) },
                                                          cookie: nil, traceID: configuration.traceID(sequence: sequence)))
    }

    /// The next thing to do: send a request, or the run is finished.
    public func next() -> FlowAction {
        state.action
    }

    /// Answers the request from `next()` with its response, received at `now`.
    public mutating func receive(_ head: HTTPResponseHead, body: [UInt8], elapsed: TimeInterval, now: Date = Date()) {
        guard !head.isInformational, let request = state.pendingRequest else { return }
        let decisions = request.agent == .app
            ? appJar.receive(head, from: request.url, now: now)
            : browserJar.receive(head, from: request.url, now: now)
        let received = Received(request: request, head: head, wireBody: body, cookieDecisions: decisions)
        var log = CheckLog()
        receivedAt = now
        remember(received)
        var next: State?
        var diagnosis: Diagnosis?
        do throws(FlowFailure) {
            next = try advance(received, log: &log, now: now)
            serverEvidence.learn(from: received)
        } catch {
            log.fail(error.evidence)
            diagnosis = Diagnosis(mode: error.mode, step: request.step, evidence: error.evidence, sentence: error.sentence,
                                  advice: error.advice)
        }
        results.append(StepResult(step: request.step, label: classifier.classify(request.head, response: head),
                                  agent: request.agent, traceID: request.traceID, request: summary(of: request),
                                  response: received.summary, transportFailure: nil, elapsed: elapsed,
                                  verdict: diagnosis == nil ? .pass : .fail, checks: log.checks))
        if let next { state = next } else { finish(diagnosis) }
    }

    /// Answers the request from `next()` with a failure to get a response.
    public mutating func fail(_ failure: TransportFailure, elapsed: TimeInterval) {
        guard let request = state.pendingRequest else { return }
        let mode: FailureMode
        switch failure {
        case .tlsFailed(_, clientCertificateRequested: true):
            mode = .clientCertRequired
        case .connectionReset, .closedWithoutResponse:
            mode = request.step == .tokenExchange ? .resetTokenPost : .transportFailure
        default:
            mode = .transportFailure
        }
        let evidence = "\(request.head.method) \(request.url): \(failure)"
        results.append(StepResult(step: request.step, label: classifier.classify(request.head), agent: request.agent,
                                  traceID: request.traceID, request: summary(of: request), response: nil,
                                  transportFailure: failure, elapsed: elapsed, verdict: .fail,
                                  checks: [StepResult.Check(kind: .failed, message: evidence)]))
        finish(Diagnosis(mode: mode, step: request.step, evidence: evidence))
    }

    private mutating func finish(_ diagnosis: Diagnosis?) {
        let signedIn = results.contains { $0.step == .tokenExchange && $0.verdict == .pass }
        state = .finished(FlowOutcome(succeeded: diagnosis == nil && signedIn, signInCompleted: signedIn,
                                      username: username, steps: results, diagnosis: diagnosis))
    }

    /// The next request of the run, with the agent's cookies for `url` at `now` and the next trace id.
    mutating func makeRequest(_ step: FlowStep, agent: FlowAgent, method: String, url: AbsoluteURL,
                              body: [UInt8] = [], contentType: String? = nil, accept: String,
                              extraFields: [(String, String)] = [], now: Date) -> FlowRequest {
        sequence += 1
        let jar = agent == .app ? appJar : browserJar
        return SignInFlow.buildRequest(step, agent: agent, method: method, url: url, body: body, contentType: contentType,
                                       accept: accept,
                                       extraFields: configuration.requestFields.map { ($0.name, $0.value) } + extraFields,
                                       cookie: jar.cookieHeader(for: url, now: now),
                                       traceID: configuration.traceID(sequence: sequence))
    }

    /// A request with `Host`, `Accept`, `Cookie`, extra fields, body framing and the trace field, in that order.
    static func buildRequest(_ step: FlowStep, agent: FlowAgent, method: String, url: AbsoluteURL,
                             body: [UInt8] = [], contentType: String? = nil, accept: String,
                             extraFields: [(String, String)] = [], cookie: String?, traceID: String?) -> FlowRequest {
        var fields = HTTPFields()
        fields.append("Host", url.origin.authority)
        fields.append("Accept", accept)
        if let cookie { fields.append("Cookie", cookie) }
        for (name, value) in extraFields { fields.append(name, value) }
        if let contentType { fields.append("Content-Type", contentType) }
        if !body.isEmpty || ["POST", "PUT", "PATCH"].contains(method) { fields.append("Content-Length", String(body.count)) }
        if let traceID { fields.append(SignInFlow.traceFieldName, traceID) }
        let head = HTTPRequestHead(method: HTTPMethod(method), scheme: url.origin.scheme, authority: url.origin.authority,
                                   path: url.pathAndQuery, fields: fields)
        return FlowRequest(step: step, agent: agent, url: url, head: head, body: body, traceID: traceID)
    }

    func summary(of request: FlowRequest) -> StepResult.RequestSummary {
        StepResult.RequestSummary(method: request.head.method.rawValue, url: request.url.serialized,
                                  cookieNames: CookieJar.parseCookieHeader(request.head.fields).map(\.name),
                                  bodyBytes: request.body.count)
    }

    /// The context path in front of `/rest` in a resource path (`/suite/rest/x` → `suite`), else `suite`.
    static func contextPath(ofResource path: String) -> String {
        if let range = path.range(of: "/rest/") { return String(path[..<range.lowerBound]) }
        if path.hasSuffix("/rest") { return String(path.dropLast(5)) }
        return "suite"
    }
}
