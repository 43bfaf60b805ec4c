import Foundation
import HTTP
@testable import AuthFlow

/// Runs a `SignInFlow` against a `MockServer` in memory, with hooks that play
/// a tampering intermediary (the test stand-in for the proxy's faults).
struct InMemoryDriver {
    /// What a hook may do with one exchange.
    enum Interception {
        /// Forward to the server (after any edits made to the request).
        case forward
        /// Do not reach the server; answer with this instead.
        case answer(HTTPResponseHead, [UInt8])
        /// The transport fails.
        case fail(TransportFailure)
        /// Forward twice (an intermediary retrying); the client gets the second answer.
        case forwardTwice
    }

    var server: MockServer
    var now: Date
    /// Called with each request before the server sees it.
    var onRequest: (FlowRequest, inout MockRequest) -> Interception = { _, _ in .forward }
    /// Called with each server response before the client sees it.
    var onResponse: (FlowRequest, inout HTTPResponseHead, inout [UInt8]) -> Void = { _, _, _ in }
    /// Seconds the clock moves before each request, by step.
    var delay: (FlowStep) -> TimeInterval = { _ in 0 }
    /// Every request the server received, with its answer.
    private(set) var serverLog: [(MockRequest, MockResponse)] = []
    /// Every request the client sent.
    private(set) var sent: [FlowRequest] = []

    init(server: MockServer, now: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        self.server = server
        self.now = now
    }

    /// Sends one request to the server (no hooks).
    mutating func exchange(_ request: MockRequest) -> MockResponse {
        let response = server.handle(request, now: now)
        serverLog.append((request, response))
        return response
    }

    mutating func run(_ flow: inout SignInFlow) -> FlowOutcome {
        for _ in 0..<20 {
            guard case .send(let request) = flow.next() else { break }
            sent.append(request)
            now = now.addingTimeInterval(delay(request.step))
            var mock = MockRequest(head: request.head, body: request.body)
            let interception = onRequest(request, &mock)
            switch interception {
            case .fail(let failure):
                flow.fail(failure, elapsed: 0.001)
            case .answer(let head, let body):
                flow.receive(head, body: body, elapsed: 0.001, now: now)
            case .forward, .forwardTwice:
                if case .forwardTwice = interception { _ = exchange(mock) }
                let response = exchange(mock)
                var head = response.head
                var body = response.body
                onResponse(request, &head, &body)
                flow.receive(head, body: body, elapsed: 0.001, now: now)
            }
        }
        guard case .finished(let outcome) = flow.next() else { fatalError("flow did not finish in 20 exchanges") }
        return outcome
    }
}

/// Shared fixtures.
enum Fixture {
    static let origin = Origin(scheme: "https", host: "mysite.test", port: 8443)
    static let resource = AbsoluteURL("https://mysite.test:8443/suite/rest/a/sites/latest")!

    static func server(_ edit: (inout MockServerConfiguration) -> Void = { _ in }) -> MockServer {
        var configuration = MockServerConfiguration(externalOrigin: origin)
        edit(&configuration)
        return MockServer(configuration: configuration)
    }

    static func flow(_ edit: (inout SignInFlow.Configuration) -> Void = { _ in }) -> SignInFlow {
        var configuration = SignInFlow.Configuration(resourceURL: resource, traceRunID: "run1", expectsTraceEcho: true)
        edit(&configuration)
        return SignInFlow(configuration: configuration)
    }
}
