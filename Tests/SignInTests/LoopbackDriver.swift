import AuthFlow
import Dispatch
import Foundation
import HTTP
import Transport
import XCTest
@testable import SignIn

/// Runs a `SignInFlow` against a loopback host over real connections, on the
/// test's thread, with hooks that tamper with requests the way a bad client
/// or intermediary would — for the bad-input tests of the mock server.
struct LoopbackDriver {
    /// What a hook does with one request before it goes out.
    enum Plan {
        case send
        /// Send it twice; the flow sees the second answer.
        case sendTwice
        /// Wait this long first.
        case delay(TimeInterval)
    }

    let loopback: Loopback
    let client = HTTPClient()
    private let tls: HTTPClientTLS
    /// Every request sent (after the hook) with the response it got.
    private(set) var log: [(step: FlowStep, head: HTTPRequestHead, response: HTTPClientResponse)] = []

    init(_ loopback: Loopback, protocols: HTTPProtocolChoice = .negotiated) throws {
        self.loopback = loopback
        tls = try HTTPClientTLS(trustRoots: .caFile(SharedCA.authority.certificatePath), protocols: protocols)
    }

    /// Sends one request and waits for the response.
    func send(_ head: HTTPRequestHead, body: [UInt8] = []) throws -> HTTPClientResponse {
        let endpoint = HTTPEndpoint(host: "127.0.0.1", port: UInt16(loopback.origin.port ?? 443), tls: tls)
        let done = DispatchSemaphore(value: 0)
        let box = ResultBox()
        client.send(head, body: body, to: endpoint) { result in
            box.result = result
            done.signal()
        }
        done.wait()
        return try XCTUnwrap(box.result).get()
    }

    /// Runs the flow; `hook` may edit each request and plan how it goes.
    mutating func run(_ flow: inout SignInFlow,
                      hook: (FlowStep, inout HTTPRequestHead, inout [UInt8]) -> Plan = { _, _, _ in .send }) throws -> FlowOutcome {
        while case .send(let request) = flow.next() {
            var head = request.head
            var body = request.body
            let plan = hook(request.step, &head, &body)
            if head.fields.contains("Content-Length") { head.fields.set("Content-Length", String(body.count)) }
            if case .delay(let seconds) = plan { Thread.sleep(forTimeInterval: seconds) }
            if case .sendTwice = plan { log.append((request.step, head, try send(head, body: body))) }
            let response = try send(head, body: body)
            log.append((request.step, head, response))
            flow.receive(response.head, body: response.body, elapsed: 0, now: Date())
        }
        guard case .finished(let outcome) = flow.next() else { preconditionFailure("the loop ends only when finished") }
        return outcome
    }

    /// The last response the server gave at `step`.
    func response(at step: FlowStep) -> HTTPClientResponse? {
        log.last { $0.step == step }?.response
    }
}

/// Carries a result from the client's loop to the waiting test thread (written before the signal, read after the wait).
private final class ResultBox: @unchecked Sendable {
    var result: Result<HTTPClientResponse, TransportError>?
}
