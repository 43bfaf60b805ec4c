import Foundation
import HTTP
import IntactTestSupport
import Transport
import Wire
import XCTest

/// Model-based test of the pool invariant: every upstream connection the pool
/// holds is idle-and-clean, busy with live exchanges, or closed — never open,
/// idle and unusable. Seeded random interleavings of successes, client errors
/// (abandoning the request body or the response, or withdrawing the request
/// while it waits for a connection) and upstream errors (the origin resets,
/// answers before the request body is sent, or goes away) run against one
/// pool and a plaintext origin (HTTP/1.1, and HTTP/2 with prior knowledge);
/// the invariant is checked at every event, and once a step's exchanges are
/// over no connection may stay busy.
///
/// Pool and origin run on one embedded loop (`EventLoop.embedded()`), their
/// connections socket pairs in memory (`EmbeddedNetwork`): every
/// interleaving is the same on every run, and a step is over when the loop
/// has nothing left to do, with no wait.
final class HTTPClientPoolInvariantTests: XCTestCase {
    /// What one exchange of a step does.
    private enum Action: CaseIterable {
        /// GET with a response body, read to its end.
        case success
        /// POST whose body is echoed, sent whole.
        case upload
        /// POST with a declared body of which only part is sent, then the client resets.
        case clientAbandonsRequest
        /// GET of a long response, reset by the client after its first bytes.
        case clientAbandonsResponse
        /// The origin resets the connection (`/reset`).
        case upstreamResets
        /// The origin answers 204 before reading the request body, which is never finished.
        case upstreamAnswersEarly
        /// The request is withdrawn one loop turn after it was asked for (the
        /// client left while its connection was being dialled or waited for);
        /// when the pool handed it a stream already, that stream is reset.
        case clientLeavesWhileWaiting
        /// The origin closes the connection gracefully as it answers (HTTP/2:
        /// GOAWAY): once the last stream ended the pool must close the connection.
        case upstreamGoesAway
    }

    func testRandomInterleavingsOverHTTP1KeepEveryConnectionIdleBusyOrClosed() throws {
        try checkInvariant(.http1)
    }

    func testRandomInterleavingsOverHTTP2KeepEveryConnectionIdleBusyOrClosed() throws {
        try checkInvariant(.http2)
    }

    private func checkInvariant(_ protocols: HTTPProtocolChoice) throws {
        let loop = EventLoop.embedded(label: "pool-invariant-tests")
        let network = EmbeddedNetwork(loop: loop)
        let address = SocketAddress.loopbackIPv4(port: 8443)
        var origin = HTTPServer.Configuration(address: address)
        origin.connection.protocolChoice = protocols
        let streaming = Locked(StreamingStats())
        let onBlocked = Locked<(@Sendable () -> Void)?>(nil)
        let server = HTTPServer(group: EventLoopGroup(loopCount: 1, label: "unused"), configuration: origin) { stream in
            TestOrigin.route(stream, streaming: streaming, onBlocked: onBlocked)
        }
        _ = server.start(on: network)
        var configuration = HTTPClientPool.Configuration()
        configuration.maxConnectionsPerEndpoint = 3
        let pool = HTTPClientPool(loop: loop, configuration: configuration)
        defer {
            pool.close(resetting: true)
            loop.run()
        }
        let endpoint = HTTPEndpoint(host: "127.0.0.1", port: address.port, tls: nil, protocolChoice: protocols)
        for seed: UInt64 in [1, 2, 3] {
            var random = SeededGenerator(state: seed)
            for step in 0..<25 {
                // Up to four exchanges at once, more than the pool has connections.
                let actions = (0..<Int.random(in: 1...4, using: &random)).map { _ in
                    Action.allCases.randomElement(using: &random)!
                }
                let context = "\(protocols), seed \(seed), step \(step), \(actions.map { "\($0)" })"
                let finished = actions.map { Self.run($0, pool: pool, endpoint: endpoint, context: context) }
                loop.run()
                for (index, done) in finished.enumerated() {
                    XCTAssertTrue(done.current, "\(context): exchange \(index) never ended")
                }
                Self.assertInvariant(pool, context: context, settled: true)
            }
        }
        // The pool still serves after everything above.
        let last = Self.run(.success, pool: pool, endpoint: endpoint, context: "final")
        loop.run()
        XCTAssertTrue(last.current)
    }

    /// Starts one exchange (on the loop's next run); the flag turns true when
    /// it is over for the client (ended, failed or abandoned). Checks the
    /// invariant at each event.
    private static func run(_ action: Action, pool: HTTPClientPool, endpoint: HTTPEndpoint,
                     context: String) -> Locked<Bool> {
        let done = Locked(false)
        let finish: @Sendable () -> Void = { done.withLock { $0 = true } }
        let (head, framing): (HTTPRequestHead, HTTP1Framing?) = switch action {
        case .success: (HTTPRequestHead(method: "GET", authority: "origin.test", path: "/bytes/5000"), HTTP1Framing.none)
        case .upload: (HTTPRequestHead(method: "POST", authority: "origin.test", path: "/echo"), .contentLength(3000))
        case .clientAbandonsRequest: (HTTPRequestHead(method: "POST", authority: "origin.test", path: "/sha256"),
                                      .contentLength(100_000))
        case .clientAbandonsResponse: (HTTPRequestHead(method: "GET", authority: "origin.test", path: "/stream/8388608"),
                                       HTTP1Framing.none)
        case .upstreamResets: (HTTPRequestHead(method: "GET", authority: "origin.test", path: "/reset"), HTTP1Framing.none)
        case .upstreamAnswersEarly: (HTTPRequestHead(method: "POST", authority: "origin.test", path: "/ignore-body"),
                                     .chunked)
        case .clientLeavesWhileWaiting: (HTTPRequestHead(method: "POST", authority: "origin.test", path: "/sha256"),
                                         .contentLength(100))
        case .upstreamGoesAway: (HTTPRequestHead(method: "GET", authority: "origin.test", path: "/goaway"), HTTP1Framing.none)
        }
        let holder = Locked<HTTPClientStream?>(nil)
        let withdrawn = Locked(false)
        pool.loop.execute {
            let ticket = pool.openStream(to: endpoint, head, framing: framing, handler: { event in
                assertInvariant(pool, context: context, settled: false)
                switch event {
                case .body where action == .clientAbandonsResponse:
                    holder.current?.reset()
                    finish()
                case .end:
                    if action == .upstreamAnswersEarly { holder.current?.reset() }
                    if action == .upstreamGoesAway {
                        // Two turns on: after the stream's removal reached the pool.
                        pool.loop.execute { pool.loop.execute {
                            assertInvariant(pool, context: context + " after GOAWAY", settled: false)
                            finish()
                        } }
                        return
                    }
                    finish()
                case .failed:
                    finish()
                default:
                    break
                }
            }, completion: { result in
                XCTAssertFalse(withdrawn.current, "\(context): a withdrawn request's completion ran")
                guard case .success(let stream) = result else {
                    // Only the pool closing may refuse a stream here.
                    XCTFail("\(context): \(action) got no stream: \(result)")
                    return finish()
                }
                holder.withLock { $0 = stream }
                switch action {
                case .upload:
                    _ = try? stream.sendBody(patternBytes(3000))
                    _ = try? stream.sendEnd()
                case .clientAbandonsRequest:
                    _ = try? stream.sendBody(patternBytes(1000))
                    stream.reset()
                    finish()
                case .upstreamAnswersEarly:
                    _ = try? stream.sendBody(patternBytes(10))
                default:
                    break
                }
                assertInvariant(pool, context: context, settled: false)
            })
            guard action == .clientLeavesWhileWaiting else { return }
            pool.loop.execute {
                if pool.withdraw(ticket) {
                    withdrawn.withLock { $0 = true }
                } else {
                    // Handed a stream already (an idle connection was free): let go of it mid-request.
                    holder.current?.reset()
                }
                assertInvariant(pool, context: context, settled: false)
                finish()
            }
        }
        return done
    }

    /// No connection is stuck; when `settled` (every exchange of the step is
    /// over for the client and the loop has nothing left to do), none stays
    /// busy either: each is idle or closed.
    private static func assertInvariant(_ pool: HTTPClientPool, context: String, settled: Bool,
                                 file: StaticString = #filePath, line: UInt = #line) {
        let states = pool.connectionStates
        XCTAssertFalse(states.contains(.stuck), "\(context): \(states)", file: file, line: line)
        guard settled else { return }
        XCTAssertTrue(states.allSatisfy { $0 == .idle || $0 == .closed },
                      "\(context): connections still busy after every exchange ended: \(states)", file: file, line: line)
    }
}
