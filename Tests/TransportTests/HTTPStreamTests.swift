import Dispatch
import HTTP
import XCTest
import Wire
@testable import Transport

/// `HTTPStream` on its own, with an engine stand-in: what a connection's end
/// does to a stream depends on whether both of its messages had ended.
final class HTTPStreamTests: XCTestCase {
    /// An engine that accepts everything and does nothing; stateless, so
    /// `@unchecked Sendable` holds.
    private final class IdleDriver: HTTPStreamDriver, @unchecked Sendable {
        func sendBody(_ bytes: [UInt8], on stream: HTTPStream) throws(TransportError) {}
        func sendEnd(trailers: HTTPFields?, on stream: HTTPStream) throws(TransportError) -> HTTPFields? { nil }
        func reset(_ stream: HTTPStream, code: HTTP2ErrorCode) {}
        func isWritable(_ stream: HTTPStream) -> Bool { true }
        func pendingOutboundBytes(_ stream: HTTPStream) -> Int { 0 }
        func inboundWanted(_ stream: HTTPStream) {}
        func consumed(_ stream: HTTPStream, bytes: Int) {}
    }

    /// Makes a stream whose consumer paused before the request's
    /// end arrived, then closes the connection; returns the events the
    /// consumer saw.
    private func eventsWhenTheConnectionCloses(responseEnded: Bool) -> [String] {
        let loop = EventLoop(label: "test.stream")
        let driver = IdleDriver()
        let seen = DispatchSemaphore(value: 0)
        let box = EventsBox()
        loop.execute {
            let stream = HTTPStream(loop: loop, streamID: 1, version: .http2,
                                    request: HTTPRequestHead(method: "GET", path: "/"),
                                    requestWire: .http2(fields: []), driver: driver)
            stream.setHandler { event in box.append(event) }
            stream.pauseInbound()
            stream.receive(.body([1, 2, 3]))
            stream.receive(.end(trailers: nil))
            if responseEnded { stream.outboundEnded() }
            stream.fail(.peerClosed(during: .http2Streams))
            seen.signal()
        }
        seen.wait()
        return box.events
    }

    func testAStreamWhoseMessagesBothEndedHandsOverWhatArrivedInsteadOfFailing() {
        // The client had the whole response and hung up while the request's
        // end waited for a paused consumer: the exchange is complete.
        XCTAssertEqual(eventsWhenTheConnectionCloses(responseEnded: true), ["body 3", "end"])
    }

    func testAStreamStillSendingFailsWhenItsConnectionCloses() {
        XCTAssertEqual(eventsWhenTheConnectionCloses(responseEnded: false), ["failed"])
    }

    /// Runs `script` on a fresh stream whose consumer pauses after every body
    /// chunk (as the proxy does when the other side stops being writable), then
    /// `later` on the next loop turn, after any drain `script` scheduled;
    /// returns the events seen by the end of `script` and by the end of `later`.
    private func pausingConsumer(_ script: @escaping @Sendable (HTTPStream) -> Void,
                                 later: @escaping @Sendable (HTTPStream) -> Void = { _ in }) -> (now: [String], later: [String]) {
        let loop = EventLoop(label: "test.stream")
        let driver = IdleDriver()
        let seen = DispatchSemaphore(value: 0)
        let box = EventsBox()
        let now = EventsBox()
        let stream = HTTPStream(loop: loop, streamID: 1, version: .http2,
                                request: HTTPRequestHead(method: "GET", path: "/"),
                                requestWire: .http2(fields: []), driver: driver)
        loop.execute {
            stream.setHandler { event in
                box.append(event)
                if case .body = event { stream.pauseInbound() }
            }
        }
        loop.execute {
            script(stream)
            now.copy(box)
            loop.execute {
                later(stream)
                seen.signal()
            }
        }
        seen.wait()
        return (now.events, box.events)
    }

    func testAnEndRightAfterTheLastBodyReachesAConsumerThatJustPaused() {
        // The proxy relayed the last chunk, its client stopped being writable,
        // it paused: the response's end must still come now, so the client
        // gets it with the last bytes rather than turns later (when a client
        // that had every byte may already have hung up).
        let seen = pausingConsumer { stream in
            stream.receive(.body([1, 2, 3]))
            stream.receive(.end(trailers: nil))
        }
        XCTAssertEqual(seen.now, ["body 3", "end"])
    }

    func testAHeldEndFollowsTheHeldBodyOnResumeDespiteANewPause() {
        // Paused with a body not yet taken: the end waits behind it (nothing
        // now), then comes with it on resume although the consumer pauses
        // again on the body.
        let seen = pausingConsumer({ stream in
            stream.pauseInbound()
            stream.receive(.body([1, 2, 3]))
            stream.receive(.end(trailers: nil))
            stream.resumeInbound()
        })
        XCTAssertEqual(seen.now, [])
        XCTAssertEqual(seen.later, ["body 3", "end"])
    }

    func testAPausedConsumerStillGetsNoBody() {
        let seen = pausingConsumer({ stream in
            stream.receive(.body([1]))
            stream.receive(.body([2, 3]))
        })
        XCTAssertEqual(seen.later, ["body 1"])
    }
}

/// Events seen by a handler on the loop, read after the loop signalled.
/// `@unchecked Sendable`: written on the loop, read after a semaphore hand-off.
private final class EventsBox: @unchecked Sendable {
    private(set) var events: [String] = []

    func copy(_ other: EventsBox) { events = other.events }

    func append(_ event: HTTPStreamEvent) {
        switch event {
        case .body(let bytes): events.append("body \(bytes.count)")
        case .end: events.append("end")
        case .failed: events.append("failed")
        case .writable: events.append("writable")
        case .interimResponse, .response: events.append("response")
        }
    }
}
