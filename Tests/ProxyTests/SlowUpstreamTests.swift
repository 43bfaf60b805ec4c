import Evidence
import Foundation
import Glibc
import IntactTestSupport
import Proxy
import XCTest

/// A client that leaves while its upstream connection is still being
/// opened, against a real origin whose TLS handshake is slow: the exchange's
/// record carries the upstream leg, broken with why, and the connection
/// dialled for it joins the pool clean (no request head went out on it), so
/// the next request reuses it.
final class SlowUpstreamTests: XCTestCase {
    func testClientLeavingBeforeTheUpstreamHandshakeEndsLeavesACleanPooledConnection() throws {
        let origin = try NginxOrigin(http2: false, serverExtra: "access_log logs/access.log;")
        defer { origin.stop() }
        try origin.serve("file", size: 100)
        let relay = try DelayingRelay(to: origin.port, delay: 1.5)
        defer { relay.stop() }
        let target = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "127.0.0.1", port: relay.port))
        let proxy = try ProxyHarness(mode: .reverse(target)) { $0.upstreamVerification = .caFile(origin.caFile) }
        let url = "https://127.0.0.1:\(proxy.port)/file"

        // The client gives up while the upstream TLS handshake waits in the relay.
        let impatient = try ToolRun.curl(["--cacert", proxy.caFile, "--max-time", "0.5", "-o", "/dev/null", url])
        XCTAssertNotEqual(impatient.status, 0, "the client was answered before the upstream was ready")
        // Let the handshake finish: the connection then sits in the pool, idle.
        Thread.sleep(forTimeInterval: 2)
        let patient = try ToolRun.curl(["--cacert", proxy.caFile, "-o", "/dev/null", "-w", "%{http_code}", url])
        XCTAssertEqual(patient.output, "200", patient.error)
        XCTAssertEqual(relay.accepted, 1, "the connection dialled for the abandoned request served the next one")
        let accessLog = (try? String(contentsOfFile: origin.directory + "/logs/access.log", encoding: .utf8)) ?? ""
        XCTAssertEqual(accessLog.split(separator: "\n").count, 1, "only the second request reached the origin:\n\(accessLog)")

        let records = try proxy.stopAndRead().records
        XCTAssertEqual(records.count, 2)
        let abandoned = try XCTUnwrap(records.first { $0.error != nil }, "\(records)")
        XCTAssertEqual(abandoned.error?.side, .client)
        let leg = try XCTUnwrap(abandoned.leg(.upstream), "the upstream attempt is recorded")
        XCTAssertEqual(leg.connectionID, "none")
        XCTAssertNil(leg.request)
        XCTAssertTrue(leg.broken?.hasPrefix("the client left") == true, leg.broken ?? "not broken")
        XCTAssertTrue(leg.broken?.hasSuffix("before the upstream connection was ready") == true, leg.broken ?? "")
        let served = try XCTUnwrap(records.first { $0.error == nil })
        assertCleanHop(served)
        XCTAssertNil(served.leg(.upstream)?.broken)
    }
}

/// A loopback TCP relay that waits `delay` seconds after accepting before it
/// connects to the origin and relays both ways: to the proxy, an origin whose
/// handshake is slow. Counts the connections it accepted.
final class DelayingRelay: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let counter: Counter

    init(to originPort: Int, delay: TimeInterval) throws {
        let counter = Counter()
        (listener, port) = try RawSocket.serveLoopback { client in
            counter.increment()
            Thread.sleep(forTimeInterval: delay)
            guard let upstream = RawSocket.connect(port: originPort) else {
                close(client)
                return
            }
            DelayingRelay.relay(client, upstream)
        }
        self.counter = counter
    }

    /// Connections accepted so far.
    var accepted: Int { counter.value }

    func stop() { RawSocket.stopListening(listener) }

    /// Copies bytes each way until both directions ended, then closes both sockets.
    private static func relay(_ a: Int32, _ b: Int32) {
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        for fd in [a, b] { setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size)) }
        let both = DispatchGroup()
        for (from, to) in [(a, b), (b, a)] {
            both.enter()
            Thread.detachNewThread {
                var buffer = [UInt8](repeating: 0, count: 16384)
                while true {
                    let n = buffer.withUnsafeMutableBytes { recv(from, $0.baseAddress, $0.count, 0) }
                    guard n > 0 else { break }
                    RawSocket.send(to, Array(buffer[0..<n]))
                }
                shutdown(to, Int32(SHUT_WR))
                both.leave()
            }
        }
        both.wait()
        close(a)
        close(b)
    }

    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        var value: Int { lock.withLock { count } }
        func increment() { lock.withLock { count += 1 } }
    }
}
